import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

/// One sounding push per rider per alert in the cooldown, escalations excepted; and the
/// design's delay keys filled from realtime predictions.
@Suite struct AlertCooldownTests {
    typealias S = AlertCooldown.Sounded
    let minute: Int64 = 60_000

    @Test func oneSoundPerWindowUnlessTheSeverityRises() {
        let cooldown = AlertCooldown(seconds: 1800)
        let now: Int64 = 100 * minute
        #expect(cooldown.sounds(.warning, after: [], now: now))
        #expect(!cooldown.sounds(.warning, after: [S(at: now - 10 * minute, severity: .warning)], now: now))
        #expect(!cooldown.sounds(.info, after: [S(at: now - 10 * minute, severity: .warning)], now: now))
        // An escalation sounds, and then sets the new bar.
        #expect(cooldown.sounds(.critical, after: [S(at: now - 10 * minute, severity: .warning)], now: now))
        #expect(!cooldown.sounds(.critical, after: [S(at: now - 20 * minute, severity: .warning), S(at: now - minute, severity: .critical)], now: now))
        // Outside the window the earlier push no longer counts; at its very end neither.
        #expect(cooldown.sounds(.warning, after: [S(at: now - 31 * minute, severity: .critical)], now: now))
        #expect(cooldown.sounds(.warning, after: [S(at: now - 30 * minute, severity: .critical)], now: now))
        #expect(!cooldown.sounds(.warning, after: [S(at: now - 30 * minute + 1, severity: .critical)], now: now))
        // Off: everything sounds.
        #expect(AlertCooldown(seconds: 0).sounds(.info, after: [S(at: now, severity: .critical)], now: now))
    }

    @Test func aQuietVersionIsPassiveWithTheSameCollapseID() {
        let policy = AlertPushPolicy()
        let loud = policy.draft(ServiceAlertTests.alert(), users: ["ann"], line: "T1", routeID: "T1", stopIDs: [])
        let quiet = policy.draft(ServiceAlertTests.alert(), users: ["ann"], line: "T1", routeID: "T1", stopIDs: [], sounds: false)
        #expect(loud.interruptionLevel == .timeSensitive && loud.data["update"] == nil)
        #expect(quiet.interruptionLevel == .passive && quiet.data["update"] == true)
        #expect(quiet.collapseKey == loud.collapseKey && quiet.threadID == loud.threadID && quiet.title == loud.title)
    }

    @Test func aDelayWithKnownMinutesUsesTheDesignsShortKey() {
        var alert = ServiceAlertTests.alert()
        alert.description = nil
        let draft = AlertPushPolicy().draft(alert, users: ["ann"], line: "T1", routeID: "T1", stopIDs: [], delayMinutes: 10)
        #expect(draft.data["title_loc_key"] == "ALERT_TITLE_DELAY" && draft.data["title_loc_args"] == ["T1"])
        #expect(draft.data["loc_key"] == "ALERT_BODY_DELAY_SHORT" && draft.data["loc_args"] == ["10", "technical problem"])
        #expect(draft.data["delay_minutes"] == 10)
        // The plain fallback says the same in English.
        #expect(draft.title == "Delays on T1" && draft.body == "10 min delay due to technical problem")
        // Minutes mean nothing to another effect.
        var closed = alert
        closed.effect = "NO_SERVICE"
        let other = AlertPushPolicy().draft(closed, users: ["ann"], line: "T1", routeID: "T1", stopIDs: [], delayMinutes: 10)
        #expect(other.data["loc_key"] == "ALERT_BODY_NO_SERVICE" && other.data["delay_minutes"] == nil && other.body == nil)
        // Every key the policy can produce is in the published list.
        for effect in ["SIGNIFICANT_DELAYS", "NO_SERVICE", "UNKNOWN_EFFECT", "DETOUR", "STOP_MOVED", "ACCESSIBILITY_ISSUE", "ADDITIONAL_SERVICE"] {
            for minutes in [nil, 5] as [Int?] {
                let keys = AlertPushPolicy.localizationKeys(effect: AlertPushPolicy.effectKey(effect), delayMinutes: minutes)
                #expect(AlertPushPolicy.allLocalizationKeys.contains(keys.title) && AlertPushPolicy.allLocalizationKeys.contains(keys.body))
            }
        }
    }

    @Test func theDelayIsTheMedianOfTheLateRunsOfTheAlertsRoutes() throws {
        let t = try GTFSFixtures.alertNetwork()
        func run(_ id: String) throws -> TripInstance { TripInstance(trip: try #require(t.tripsByID[id]), day: 0) }
        var overlay = RealtimeOverlay()
        overlay.predictions[try run("T1a")] = TripPrediction(tripDelay: 540)
        overlay.predictions[try run("T1b")] = TripPrediction(updates: [.init(position: 1, arrivalDelay: 1200)])
        overlay.predictions[try run("T2a")] = TripPrediction(tripDelay: 3000)
        overlay.predictions[try run("B1a")] = TripPrediction(tripDelay: 30)
        typealias E = RealtimeAlert.InformedEntity
        // T1's runs: 9 and 20 minutes late; the median of two is the later (rounded up).
        #expect(AlertDelay.minutes(entities: [E(routeID: "T1")], timetable: t, overlay: overlay) == 20)
        #expect(AlertDelay.minutes(entities: [E(routeID: "T1"), E(routeID: "T2")], timetable: t, overlay: overlay) == 20)
        #expect(AlertDelay.minutes(entities: [E(trip: RealtimeTripDescriptor(tripID: "T1a"))], timetable: t, overlay: overlay) == 9)
        // Under a minute late is on time; a stop alone names no runs.
        #expect(AlertDelay.minutes(entities: [E(routeID: "B1")], timetable: t, overlay: overlay) == nil)
        #expect(AlertDelay.minutes(entities: [E(stopID: "TH")], timetable: t, overlay: overlay) == nil)
        overlay.predictions[try run("T2a")] = TripPrediction(canceled: true, tripDelay: 3000)
        #expect(AlertDelay.minutes(entities: [E(routeID: "T2")], timetable: t, overlay: overlay) == nil)
    }
}
