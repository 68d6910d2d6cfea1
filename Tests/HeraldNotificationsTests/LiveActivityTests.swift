import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

/// A source for tests: subjects by id, each with its content and whether it is over.
final class FixedSource: LiveActivitySource {
    let subjects = Mutex<[String: LiveActivitySnapshot]>([:])
    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        userID == "mallory" ? nil : subjects.withLock { $0[subjectID] }
    }
}

/// Records ActivityKit pushes and answers from a script (default: accepted).
final class ScriptedActivitySender: LiveActivitySender {
    private let state = Mutex<(sent: [LiveActivityMessage], script: [PushResult])>(([], []))
    init(_ script: [PushResult] = []) { state.withLock { $0.script = script } }
    func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult {
        state.withLock { state in
            state.sent.append(message)
            return state.script.isEmpty ? .accepted(providerMessageID: nil) : state.script.removeFirst()
        }
    }
    var sent: [LiveActivityMessage] { state.withLock { $0.sent } }
}

/// A PushSender that is also the activity sender, so `PushSenders` picks it.
final class ActivityRoute: PushSender, LiveActivitySender {
    let inner: ScriptedActivitySender
    init(_ inner: ScriptedActivitySender) { self.inner = inner }
    func send(_ message: PushMessage) async throws -> PushResult { .accepted(providerMessageID: nil) }
    func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult { try await inner.sendLiveActivity(message) }
}

@Suite struct LiveActivityTests {
    static let token = String(repeating: "ab", count: 40)
    static let startToken = String(repeating: "cd", count: 40)

    struct Fixture {
        let service: LiveActivityService
        let worker: LiveActivityWorker
        let sender: ScriptedActivitySender
        let source: FixedSource
        let clock: ManualClock
        let database: any Database

        func advance(_ seconds: Double) { clock.advance(by: seconds) }
        func register(_ activityID: String = "a1", subject: String = "tr_1", user: String = "ann") async throws -> LiveActivityRecord {
            try await service.register(
                userID: user,
                body: ["activity_id": .string(activityID), "kind": "trip", "subject_id": .string(subject), "push_token": .string(LiveActivityTests.token)]
            ).record
        }
        func publish(_ patch: [String: JSONValue], important: Bool = false, ends: Bool = false, alert: LiveActivityAlert? = nil) async {
            await service.publish(LiveActivityChange(kind: .trip, subjectID: "tr_1", patch: patch, important: important, alert: alert, ends: ends))
        }
        func row(_ activityID: String = "a1") async throws -> LiveActivityRecord? {
            try await service.activities(userID: "ann").first { $0.activityID == activityID }
        }
    }

    static func with(_ engine: TestEngine, script: [PushResult] = [], _ body: @Sendable @escaping (Fixture) async throws -> Void) async throws {
        try await TestDatabase.with(engine) { database in
            let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
            let service = LiveActivityService(database: database, config: LiveActivitiesConfig(), clock: clock, logger: TestDatabase.logger)
            let source = FixedSource()
            source.subjects.withLock { $0["tr_1"] = LiveActivitySnapshot(content: ["state": "ACCEPTED", "eta_minutes": .null], ended: false) }
            service.setSource(source, for: .trip)
            let sender = ScriptedActivitySender(script)
            let worker = LiveActivityWorker(
                service: service, database: database, senders: PushSenders(byProvider: [.apns: ActivityRoute(sender)], fallback: nil), clock: clock,
                logger: TestDatabase.logger)
            try await body(Fixture(service: service, worker: worker, sender: sender, source: source, clock: clock, database: database))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func routineChangesCoalesceAndImportantOnesGoAtOnce(engine: TestEngine) async throws {
        try await Self.with(engine) { f in
            let registered = try await f.register()
            #expect(registered.status == .active && registered.dueAt == nil && registered.contentObject["state"] == "ACCEPTED")
            // Nothing changed yet: nothing to send.
            #expect(try await f.worker.runOnce() == 0)
            await f.publish(["eta_minutes": 6])
            #expect(try await f.worker.runOnce() == 1)
            #expect(f.sender.sent.last?.contentState["eta_minutes"] == 6 && f.sender.sent.last?.important == false)
            // Three more within the interval: one push, a routine interval after the last, with the newest.
            for minutes in [5, 4, 3] {
                f.advance(5)
                await f.publish(["eta_minutes": .number(Double(minutes))])
                #expect(try await f.worker.runOnce() == 0)
            }
            f.advance(15)
            #expect(try await f.worker.runOnce() == 1)
            #expect(f.sender.sent.count == 2 && f.sender.sent.last?.contentState["eta_minutes"] == 3)
            // An important change does not wait, and carries its alert once.
            f.advance(1)
            await f.publish(["state": "ARRIVED"], important: true, alert: LiveActivityAlert(title: "Arrived", body: "Alex is here"))
            #expect(try await f.worker.runOnce() == 1)
            let arrived = try #require(f.sender.sent.last)
            #expect(arrived.important && arrived.alert?.title == "Arrived" && arrived.contentState["state"] == "ARRIVED")
            #expect(arrived.contentState["eta_minutes"] == 3)
            f.advance(40)
            await f.publish(["eta_minutes": 2])
            #expect(try await f.worker.runOnce() == 1)
            #expect(f.sender.sent.last?.alert == nil && f.sender.sent.last?.important == false)
            // Timestamps only grow, even within one second.
            await f.publish(["state": "IN_PROGRESS"], important: true)
            #expect(try await f.worker.runOnce() == 1)
            let stamps = f.sender.sent.map(\.timestamp)
            #expect(stamps == stamps.sorted() && Set(stamps).count == stamps.count)
            // The end: dismissal date, then nothing more.
            await f.publish(["state": "COMPLETED"], ends: true)
            #expect(try await f.worker.runOnce() == 1)
            let end = try #require(f.sender.sent.last)
            #expect(end.event == .end && end.important && end.dismissalDate == f.clock.now().epochMilliseconds / 1000 + 900)
            await f.publish(["eta_minutes": 1], important: true)
            #expect(try await f.worker.runOnce() == 0)
            let row = try #require(try await f.row())
            #expect(row.status == .ended && row.sentCount == 6 && row.dueAt == nil)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aChangeWhileAPushIsInFlightIsSentAfterIt(engine: TestEngine) async throws {
        try await Self.with(engine) { f in
            _ = try await f.register()
            await f.publish(["eta_minutes": 6])
            // Claimed by a node that then dies: its lease keeps others off until it ends.
            let lease = f.clock.now().epochMilliseconds + 60_000
            let claimed = try await f.database.transaction { db in
                try await db.raw("UPDATE live_activities SET lease_until = \(bind: lease), due_at = \(bind: lease) RETURNING id").all().count
            }
            #expect(claimed == 1)
            await f.publish(["state": "ARRIVED"], important: true)
            #expect(try await f.worker.runOnce() == 0)
            #expect(try await f.row()?.dueAt == lease)
            // The lease ends: the newest content goes once, at priority 10.
            f.advance(61)
            #expect(try await f.worker.runOnce() == 1)
            #expect(f.sender.sent.count == 1 && f.sender.sent[0].contentState["state"] == "ARRIVED" && f.sender.sent[0].important)
            #expect(try await f.worker.runOnce() == 0)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func providerAnswersEndRetryOrDropTheActivity(engine: TestEngine) async throws {
        try await Self.with(
            engine, script: [.retryLater(.apns(.tooManyRequests), after: .seconds(20)), .tokenGone(.apns(.unregistered)), .refused(.apns(.badTopic))]
        ) { f in
            _ = try await f.register("a1")
            await f.publish(["eta_minutes": 6])
            #expect(try await f.worker.runOnce() == 1)
            // Throttled: due again after Retry-After, not before.
            #expect(try await f.row()?.reason == "TooManyRequests")
            f.advance(10)
            #expect(try await f.worker.runOnce() == 0)
            f.advance(11)
            #expect(try await f.worker.runOnce() == 1)
            // The user dismissed it: gone, never pushed again.
            #expect(try await f.row()?.status == .gone)
            _ = try await f.register("a2")
            await f.publish(["eta_minutes": 5])
            #expect(try await f.worker.runOnce() == 1)
            let refused = try await f.row("a2")
            #expect(refused?.status == .failed && refused?.reason == "BadTopic")
            await f.publish(["eta_minutes": 4])
            #expect(try await f.worker.runOnce() == 0)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func startTokensStartActivitiesOnceAndGoneOnesAreForgotten(engine: TestEngine) async throws {
        try await Self.with(engine, script: [.accepted(providerMessageID: nil), .tokenGone(.apns(.unregistered))]) { f in
            let saved = try await f.service.registerStartToken(userID: "ann", body: ["kind": "trip", "push_token": .string(Self.startToken.uppercased())])
            #expect(saved.created && saved.record.token == Self.startToken)
            #expect(try await f.service.registerStartToken(userID: "ann", body: ["kind": "trip", "push_token": .string(Self.startToken)]).created == false)
            let start = LiveActivityStart(
                kind: .trip, subjectID: "tr_1", userIDs: ["ann", "bob"], attributes: ["trip_id": "tr_1"], content: ["state": "ACCEPTED"],
                alert: LiveActivityAlert(title: "Driver on the way", body: "Alex"))
            #expect(try await f.database.transaction { db in try await f.service.start(start, in: db) } == 1)
            // A change before the start push went: the start carries it.
            await f.publish(["eta_minutes": 7])
            #expect(try await f.worker.runOnce() == 1)
            let sent = try #require(f.sender.sent.first)
            #expect(sent.event == .start && sent.token == Self.startToken && sent.attributesType == "TripActivityAttributes")
            #expect(sent.attributes == ["trip_id": "tr_1"] && sent.alert?.title == "Driver on the way" && sent.contentState["eta_minutes"] == 7)
            // Later changes do not go to the start token (the app registers the activity's own).
            await f.publish(["eta_minutes": 6])
            #expect(try await f.worker.runOnce() == 0)
            // A start token APNs calls gone is forgotten.
            _ = try await f.database.transaction { db in try await f.service.start(start, in: db) }
            #expect(try await f.worker.runOnce() == 1)
            #expect(try await f.service.startTokens(userID: "ann").isEmpty)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func registrationsAreCheckedAndBounded(engine: TestEngine) async throws {
        try await Self.with(engine) { f in
            await #expect(throws: APIError.self) { _ = try await f.register(user: "mallory") }
            await #expect(throws: APIError.self) { _ = try await f.register(subject: "tr_unknown") }
            // A subject already over is ended at once.
            f.source.subjects.withLock { $0["tr_2"] = LiveActivitySnapshot(content: ["state": "COMPLETED"], ended: true) }
            let late = try await f.register("a9", subject: "tr_2")
            #expect(late.dueAt != nil && late.isEnding)
            #expect(try await f.worker.runOnce() == 1)
            #expect(f.sender.sent.last?.event == .end)
            // A rotated token replaces the old one on the same activity.
            _ = try await f.register("a1")
            let rotated = try await f.service.register(
                userID: "ann", body: ["activity_id": "a1", "kind": "trip", "subject_id": "tr_1", "push_token": .string(Self.startToken)])
            #expect(rotated.created == false && rotated.record.token == Self.startToken)
            // The app ended it itself: no more pushes.
            #expect(try await f.service.cancel(userID: "ann", activityID: "a1")?.status == .cancelled)
            await f.publish(["eta_minutes": 3], important: true)
            #expect(try await f.worker.runOnce() == 0)
        }
    }
}
