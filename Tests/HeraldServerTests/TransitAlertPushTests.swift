import Crypto
import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

/// The service-alert routes through the real server: statuses, JSON shapes, error codes and
/// who may call. Which riders an alert reaches, what it says, cooldowns, mutes, quiet hours,
/// digests and once-only pushes are the domain's, in `HeraldTransitTests/AlertPushFlowTests`.
/// On the sample feed: STBA runs Stagecoach ↔ Beatty Airport, CITY serves Stagecoach and four
/// town stops, AB Airport ↔ Bullfrog, AAMV Airport ↔ Amargosa Valley.
@Suite struct TransitAlertPushTests {
    /// The server's own alert loop is off (`push: false`): each test runs the pipeline itself,
    /// so its assertions see a finished run.
    static func quiet(_ config: inout HeraldConfig) { config.transit.alerts.push = false }

    /// Records versions and processes what is due, as the loop does.
    static func run(_ s: TestSession) async throws {
        try await s.runtime.transit.alerts.recordVersions()
        try await s.runtime.transit.alerts.processDue()
    }

    static func favorite(_ s: TestSession, _ user: String, _ stop: String, enabled: Bool = true) async throws {
        let token = try await s.token(user)
        let reply = try await s.request(.post, "/api/v1/favorites", token: token, json: ["stop_id": .string(stop), "notifications_enabled": .bool(enabled)])
        #expect(reply.status == 201)
    }

    static func device(_ s: TestSession, _ user: String) async throws {
        let token = SHA256.hash(data: Data(user.utf8)).map { String(format: "%02x", $0) }.joined()
        let reply = try await s.request(
            .post, "/api/v1/push/register", token: try await s.token(user),
            json: ["token": .string(token), "provider": "apns", "platform": "ios", "device_id": .string("phone-\(user)")])
        #expect(reply.status == 201 || reply.status == 200)
    }

    static let now = Int64(sampleMorning.timeIntervalSince1970)

    static func postAlerts(_ s: TestSession, _ entities: [TransitRealtime_FeedEntity], at timestamp: Int64 = now) async throws {
        let svc = try await s.token("rt-backend", .service)
        let reply = try await s.postProtobuf("/api/v1/transit/realtime", FeedMessages.message(entities, timestamp: timestamp), token: svc)
        #expect(reply.status == 200 || reply.status == 202)
    }

    static func alert(
        _ id: String, route: String? = nil, stop: String? = nil, trip: String? = nil, agency: String? = nil,
        severity: TransitRealtime_Alert.SeverityLevel = .warning,
        effect: TransitRealtime_Alert.Effect = .significantDelays, header: String = "Delays", start: Int64 = now - 600, end: Int64 = now + 3600
    ) -> TransitRealtime_FeedEntity {
        var entity = FeedMessages.alert(id, route: route, stop: stop, severity: severity, header: header, start: start, end: end)
        entity.alert.effect = effect
        if trip != nil || agency != nil {
            var selector = TransitRealtime_EntitySelector()
            if let trip { selector.trip.tripID = trip }
            if let agency { selector.agencyID = agency }
            entity.alert.informedEntity = [selector]
        }
        return entity
    }

    /// The rider's actions on an alert over HTTP (the read receipt, MUTE_24H and its undo),
    /// and the pipeline's counters as `/metrics` renders them.
    @Test func readReceiptAndMuteRoutesAnswerWithTheirStatusesShapesAndCodes() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            try await Self.favorite(s, "ann", "STAGECOACH")
            try await Self.device(s, "ann")
            try await Self.postAlerts(s, [Self.alert("stba-delay", route: "STBA", header: "Shuttle delayed")])
            try await Self.run(s)
            let metrics = try await s.request(.get, "/metrics")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("herald_transit_alert_versions_total 1"))
            #expect(text.contains("herald_transit_alert_pushes_queued_total 1"))
            #expect(text.contains("herald_transit_alert_matched_users_total 1"))
            // The read receipt marks the user's notifications read.
            let annToken = try await s.token("ann")
            #expect(try await s.request(.get, "/api/v1/notifications/unread-count", token: annToken).data?["count"] == 1)
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened", token: annToken).status == 204)
            #expect(try await s.request(.get, "/api/v1/notifications/unread-count", token: annToken).data?["count"] == 0)
            // Opened by a rider it was never pushed to: 204 all the same; only an alert Herald never had is 404.
            let catToken = try await s.token("cat")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened", token: catToken).status == 204)
            #expect(try await s.request(.post, "/api/v1/alerts/no-such-alert/opened", token: catToken).errorCode == "ALERT_NOT_FOUND")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened").status == 401)
            // MUTE_24H: the mute made, in the answer and in the list; bodies it refuses.
            let muted = try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: catToken)
            #expect(muted.status == 201)
            #expect(muted.data?["muted"]?[0]?["kind"] == "alert" && muted.data?["muted"]?[0]?["id"] == "stba-delay")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: catToken, json: ["scope": "everything"]).status == 422)
            #expect(try await s.request(.get, "/api/v1/alerts/mutes", token: catToken).data?["mutes"]?.arrayValue?.count == 1)
            #expect(try await s.request(.post, "/api/v1/alerts/nope/mute", token: catToken).errorCode == "ALERT_NOT_FOUND")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: catToken, json: ["hours": 0]).status == 422)
            let routeMute = try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: try await s.token("dan"), json: ["scope": "routes"])
            #expect(routeMute.data?["muted"]?[0]?["kind"] == "route" && routeMute.data?["muted"]?[0]?["id"] == "STBA")
            // The undo, once.
            #expect(try await s.request(.delete, "/api/v1/alerts/stba-delay/mute", token: catToken).status == 204)
            #expect(try await s.request(.delete, "/api/v1/alerts/stba-delay/mute", token: catToken).errorCode == "ALERT_NOT_FOUND")
        }
    }

    /// Route favourites and stops narrowed to routes as the favourites routes take them: the
    /// answers' shapes and every body they refuse.
    @Test func favouriteRoutesTakeRoutesAndNarrowedStopsAndRefuseTheRest() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            let ann = try await s.token("ann")
            let bob = try await s.token("bob")
            let cat = try await s.token("cat")
            let route = try await s.request(.post, "/api/v1/favorites", token: ann, json: ["route_id": "AB", "label": "Commute"])
            #expect(route.status == 201)
            #expect(route.data?["kind"] == "route" && route.data?["route_id"] == "AB" && route.data?["stop_id"] == .null)
            #expect(route.data?["route_name"] == "10")  // its short name
            let narrowed = try await s.request(.post, "/api/v1/favorites", token: bob, json: ["stop_id": "BEATTY_AIRPORT", "route_ids": ["STBA"]])
            #expect(narrowed.status == 201 && narrowed.data?["kind"] == "stop" && narrowed.data?["route_ids"] == ["STBA"])
            try await Self.favorite(s, "cat", "BEATTY_AIRPORT")
            // The same route twice, both kinds at once, a route not serving the stop, unknown ids.
            #expect(try await s.request(.post, "/api/v1/favorites", token: ann, json: ["route_id": "AB"]).errorCode == "FAVORITE_EXISTS")
            #expect(try await s.request(.post, "/api/v1/favorites", token: ann, json: ["route_id": "AB", "stop_id": "AMV"]).errorCode == "VALIDATION_FAILED")
            #expect(try await s.request(.post, "/api/v1/favorites", token: ann, json: ["label": "x"]).errorCode == "VALIDATION_FAILED")
            #expect(
                try await s.request(.post, "/api/v1/favorites", token: ann, json: ["route_id": "AB", "route_ids": ["AB"]]).errorCode == "VALIDATION_FAILED")
            #expect(
                try await s.request(.post, "/api/v1/favorites", token: ann, json: ["stop_id": "STAGECOACH", "route_ids": ["AAMV"]]).errorCode
                    == "VALIDATION_FAILED")
            #expect(
                try await s.request(.post, "/api/v1/favorites", token: ann, json: ["stop_id": "STAGECOACH", "route_ids": []]).errorCode == "VALIDATION_FAILED")
            #expect(try await s.request(.post, "/api/v1/favorites", token: ann, json: ["route_id": "NOPE"]).errorCode == "ROUTE_NOT_FOUND")
            #expect(try await s.request(.get, "/api/v1/favorites", token: ann).data?["favorites"]?[0]?["kind"] == "route")
            // Bob widens his favourite to every route (null), Cat narrows hers; a route favourite cannot be narrowed.
            let bobs = try #require(narrowed.data?["id"]?.stringValue)
            let widened = try await s.request(.patch, "/api/v1/favorites/\(bobs)", token: bob, json: ["route_ids": .null])
            #expect(widened.status == 200 && widened.data?["route_ids"] == .null)
            let annsRoute = try #require(route.data?["id"]?.stringValue)
            #expect(try await s.request(.patch, "/api/v1/favorites/\(annsRoute)", token: ann, json: ["route_ids": ["AB"]]).errorCode == "VALIDATION_FAILED")
            let cats = try #require(try await s.request(.get, "/api/v1/favorites", token: cat).data?["favorites"]?[0]?["id"]?.stringValue)
            #expect(try await s.request(.patch, "/api/v1/favorites/\(cats)", token: cat, json: ["route_ids": ["AB"]]).data?["route_ids"] == ["AB"])
        }
    }

    /// What a backend posts and what riders set, as the routes take them (what the pipeline
    /// does with them is the domain's).
    @Test func aBackendsAlertAndRidersSettingsAreTakenByTheirRoutes() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            let svc = try await s.token("ops", .service)
            let posted = try await s.request(
                .post, "/api/v1/alerts", token: svc,
                json: ["alert_id": "posted-1", "severity": "info", "header": "Lift out at the airport", "affected_stops": ["BEATTY_AIRPORT"]])
            #expect(posted.status == 201)
            let quiet: JSONValue = ["quiet_hours": ["enabled": true, "start": "22:00", "end": "07:00"], "time_zone": "America/Los_Angeles"]
            #expect(try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("ann"), json: quiet).status == 200)
            #expect(
                try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("bob"), json: ["severity_floor": "alert"]).status == 200
            )
            #expect(
                try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("cat"), json: ["time_sensitive_allowed": false]).status
                    == 200)
        }
    }
}
