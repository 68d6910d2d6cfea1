import Foundation
import HeraldCore
import HeraldNotifications
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

@Suite struct ServiceAlertTests {
    static func alert(header: String = "Delays on T1", entities: [RealtimeAlert.InformedEntity] = [.init(routeID: "T1"), .init(stopID: "200060")])
        -> ServiceAlert
    {
        ServiceAlert(
            id: "alert_12345", source: .realtime(feed: "default"), severity: .warning, cause: "TECHNICAL_PROBLEM", effect: "SIGNIFICANT_DELAYS",
            header: header, description: "Signal failure at Central.", url: nil, periods: [.init(start: 1_000, end: 2_000), .init(start: 5_000, end: nil)],
            entities: entities)
    }

    @Test func theFingerprintNamesTheContentNotItsOrder() {
        let a = Self.alert()
        var reordered = a
        reordered.entities.reverse()
        reordered.periods.reverse()
        #expect(a.fingerprint == reordered.fingerprint)
        #expect(a.fingerprint.count == 64)
        #expect(Self.alert(header: "Delays on T1 (updated)").fingerprint != a.fingerprint)
        var longer = a
        longer.periods[0].end = 2_500
        #expect(longer.fingerprint != a.fingerprint)
        #expect(Self.alert(entities: [.init(routeID: "T1")]).fingerprint != a.fingerprint)
        var severe = a
        severe.severity = .critical
        #expect(severe.fingerprint != a.fingerprint)
    }

    @Test func itsStoredFormReadsBackTheSame() throws {
        var a = Self.alert()
        a.entities.append(.init(agencyID: "A", routeType: 3, directionID: 1, trip: RealtimeTripDescriptor(tripID: "T1a", routeID: "T1", startDay: 20_000)))
        var writer = JSONWriter()
        writer.write(a.json)
        let back = try #require(ServiceAlert(json: try JSONDecoder().decode(JSONValue.self, from: Data(writer.string.utf8))))
        #expect(back == a)
        #expect(back.fingerprint == a.fingerprint)
        #expect(ServiceAlert(json: ["id": "x"]) == nil)
    }

    @Test func periodsDecideWhenItIsInForce() {
        let a = Self.alert()
        #expect(!a.isInForce(at: 999) && a.nextStart(after: 999) == 1_000)
        #expect(a.isInForce(at: 1_500) && a.nextStart(after: 1_500) == nil)
        #expect(!a.isInForce(at: 3_000) && a.nextStart(after: 3_000) == 5_000 && !a.hasEnded(at: 3_000))
        #expect(a.isInForce(at: 9_999_999))
        var ended = a
        ended.periods = [.init(start: 1_000, end: 2_000)]
        #expect(ended.hasEnded(at: 2_000) && !ended.hasEnded(at: 1_999))
        var always = a
        always.periods = []
        #expect(always.isInForce(at: 0) && !always.hasEnded(at: .max))
    }
}

@Suite struct AlertPushPolicyTests {
    @Test func theSeverityTable() {
        #expect(AlertSeverity.allCases.map(AlertPushPolicy.pushSeverity) == ["minor", "major", "cancelled"])
        #expect(AlertSeverity.allCases.map(AlertPushPolicy.heraldSeverity) == [.info, .warning, .alert])
        #expect(AlertSeverity.allCases.map(AlertPushPolicy.ttlSeconds) == [1800, 3600, 7200])
        #expect(AlertSeverity.allCases.map(AlertPushPolicy.interruptionLevel) == [.active, .timeSensitive, .timeSensitive])
    }

    @Test func theDraftCarriesTheTransitDesignsKeys() {
        let policy = AlertPushPolicy()
        let draft = policy.draft(ServiceAlertTests.alert(), users: ["ann", "bob"], line: "T1", routeID: "T1", stopIDs: ["200060"])
        #expect(draft.userIDs == ["ann", "bob"])
        #expect(draft.type == "service_alert")
        #expect(draft.title == "Delays on T1")
        #expect(draft.body == "Signal failure at Central.")
        #expect(draft.category == "SERVICE_ALERT")
        #expect(draft.collapseKey == "alert_12345" && draft.threadID == "alert_12345")
        #expect(draft.severity == .warning && draft.ttlSeconds == 3600 && draft.interruptionLevel == .timeSensitive)
        #expect(draft.dedupeKey == nil)
        #expect(
            draft.data == [
                "alert_id": "alert_12345", "route_id": "T1", "stop_ids": ["200060"], "severity": "major", "deep_link": "transitapp://alerts/alert_12345",
                "title_loc_key": "ALERT_TITLE_DELAY", "title_loc_args": ["T1"], "loc_key": "ALERT_BODY_DELAY",
                "loc_args": ["Delays on T1", "technical problem"],
            ])
        let plain = AlertPushPolicy(deepLink: "myapp://a/{alert_id}?from=push", localized: false).draft(
            ServiceAlertTests.alert(), users: ["ann"], line: nil, routeID: nil, stopIDs: [])
        #expect(plain.data["title_loc_key"] == nil && plain.data["route_id"] == .null)
        #expect(plain.data["deep_link"] == "myapp://a/alert_12345?from=push")
    }

    @Test func idsApnsWouldRefuseAreDigested() {
        let long = String(repeating: "x", count: 65)
        let key = AlertPushPolicy.collapseKey(long)
        #expect(key.hasPrefix("alert-") && key.utf8.count == 38)
        #expect(AlertPushPolicy.collapseKey(long) == key)
        #expect(AlertPushPolicy.collapseKey(String(repeating: "x", count: 64)).count == 64)
        #expect(AlertPushPolicy().link("a b/c") == "transitapp://alerts/a%20b%2Fc")
        var missing = ServiceAlertTests.alert()
        missing.header = nil
        missing.effect = "NO_SERVICE"
        missing.cause = "UNKNOWN_CAUSE"
        let draft = AlertPushPolicy().draft(missing, users: ["ann"], line: "T1", routeID: "T1", stopIDs: [])
        #expect(draft.title == "No service: T1")
        #expect(draft.data["loc_args"] == ["No service: T1", ""])
        #expect(draft.data["title_loc_key"] == "ALERT_TITLE_NO_SERVICE")
    }

    @Test func aDigestSumsUpTheHeldAlerts() {
        var second = ServiceAlertTests.alert(header: "Lifts out at Wynyard")
        second.id = "alert_2"
        second.severity = .critical
        let draft = AlertPushPolicy().digest([ServiceAlertTests.alert(), second], userID: "ann")
        #expect(draft.userIDs == ["ann"])
        #expect(draft.title == "2 service alerts")
        #expect(draft.body == "Delays on T1\nLifts out at Wynyard")
        #expect(draft.data["alert_ids"] == ["alert_12345", "alert_2"])
        #expect(draft.data["severity"] == "cancelled")
        #expect(draft.interruptionLevel == .active && draft.collapseKey == "alerts-digest")
        #expect(draft.data["deep_link"] == "transitapp://alerts/")
    }
}
