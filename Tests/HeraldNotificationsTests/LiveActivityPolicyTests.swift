import HeraldCore
import HeraldNotifications
import HeraldPush
import Testing

/// The update-budget rules as a value: no database, no clock.
@Suite struct LiveActivityPolicyTests {
    let policy = LiveActivityPolicy(routineIntervalMs: 30_000, staleSeconds: 900, dismissalSeconds: 600)
    let now: Int64 = 1_800_000_000_000

    func row(mode: LiveActivityMode = .update) -> LiveActivityRecord {
        LiveActivityRecord(
            id: "la_1", userID: "ann", appID: "default", kind: mode == .channel ? .departures : .trip, subjectID: mode == .channel ? "S1" : "tr_1",
            activityID: mode == .update ? "a1" : nil, mode: mode,
            token: "ab", environment: nil, content: ["state": "ACCEPTED", "eta_minutes": 5], now: now)
    }

    func eta(_ minutes: Int) -> LiveActivityChange {
        LiveActivityChange(kind: .trip, subjectID: "tr_1", patch: ["eta_minutes": .number(Double(minutes))])
    }

    @Test func sameContentIsNoChange() {
        #expect(policy.apply(eta(5), to: row(), now: now) == nil)
        #expect(policy.apply(eta(4), to: row(), now: now) != nil)
    }

    /// Every node computes a stop's board: one computed before what the row shows is dropped.
    @Test func aChangeComputedBeforeTheShownContentIsDropped() throws {
        let board: (String) -> LiveActivityChange = { trip in
            LiveActivityChange(kind: .departures, subjectID: "S1", patch: ["departures": [.string(trip)]], asOf: now + 10_000)
        }
        let shown = try #require(policy.apply(board("T2"), to: row(), now: now + 12_000))
        #expect(shown.contentAt == now + 10_000)
        // A node that computed the board earlier (the departure T1 had not left yet) commits later.
        var late = board("T1")
        late.asOf = now + 9_000
        #expect(policy.apply(late, to: shown, now: now + 13_000) == nil)
        var later = board("T3")
        later.asOf = now + 11_000
        #expect(policy.apply(later, to: shown, now: now + 13_000)?.contentObject["departures"] == ["T3"])
        // A channel row takes changes and pushes like an activity's own token.
        let channel = try #require(policy.apply(board("T2"), to: row(mode: .channel), now: now + 12_000))
        #expect(policy.message(for: channel, attributesType: "DeparturesActivityAttributes").event == .update)
    }

    @Test func routineChangesWaitForTheIntervalAfterTheLastPush() throws {
        var sent = row()
        sent.lastSentAt = now - 10_000
        let next = try #require(policy.apply(eta(4), to: sent, now: now))
        #expect(next.dueAt == now + 20_000 && next.version == 1 && next.importantVersion == 0)
        // A newer one meanwhile keeps the earlier due time and replaces the content.
        let newer = try #require(policy.apply(eta(3), to: next, now: now + 5_000))
        #expect(newer.dueAt == now + 20_000 && newer.version == 2 && newer.contentObject["eta_minutes"] == 3)
        // Never pushed: due at once.
        #expect(policy.apply(eta(4), to: row(), now: now)?.dueAt == now)
    }

    @Test func importantChangesAndEndsAreDueAtOnce() throws {
        var sent = row()
        sent.lastSentAt = now - 1_000
        let arrived = try #require(
            policy.apply(
                LiveActivityChange(kind: .trip, subjectID: "tr_1", patch: ["state": "ARRIVED"], alert: LiveActivityAlert(title: "Here", body: "b")),
                to: sent, now: now))
        #expect(arrived.dueAt == now && arrived.importantVersion == 1 && arrived.pendingAlert?.title == "Here")
        let ended = try #require(policy.apply(LiveActivityChange(kind: .trip, subjectID: "tr_1", patch: [:], ends: true), to: sent, now: now))
        #expect(ended.isEnding && ended.dismissalAt == now + 600_000 && ended.dueAt == now)
        #expect(policy.apply(eta(1), to: ended, now: now) == nil)
    }

    @Test func aLeasedRowKeepsItsDueTimeForTheSenderToReschedule() throws {
        var leased = row()
        leased.leaseUntil = now + 60_000
        leased.dueAt = now + 60_000
        let next = try #require(policy.apply(eta(3), to: leased, now: now))
        #expect(next.dueAt == now + 60_000 && next.version == 1)
        #expect(policy.dueAfterSend(next, sentVersion: 0, now: now) == now + 30_000)
        #expect(policy.dueAfterSend(next, sentVersion: 1, now: now) == nil)
    }

    @Test func aStartThatNeverWentIsCancelledByTheEnd() throws {
        let cancelled = try #require(policy.apply(LiveActivityChange(kind: .trip, subjectID: "tr_1", patch: [:], ends: true), to: row(mode: .start), now: now))
        #expect(cancelled.status == .cancelled && cancelled.dueAt == nil)
    }

    @Test func theMessageSaysWhatThePushIs() throws {
        var r = try #require(policy.apply(eta(4), to: row(), now: now + 1_500))
        var message = policy.message(for: r, attributesType: "TripActivityAttributes")
        #expect(message.event == .update && !message.important && message.timestamp == 1_800_000_001)
        #expect(message.staleDate == 1_800_000_901 && message.attributes == nil && message.pushID == "la_1:1")
        // The same second as the last push: one later.
        r.sentTimestamp = 1_800_000_001
        message = policy.message(for: r, attributesType: "TripActivityAttributes")
        #expect(message.timestamp == 1_800_000_002)
        // An alert already sent is not sent again.
        r.alert = #"{"title":"t","body":"b"}"#
        r.alertVersion = 1
        r.sentVersion = 1
        #expect(policy.message(for: r, attributesType: "X").alert == nil)
    }
}
