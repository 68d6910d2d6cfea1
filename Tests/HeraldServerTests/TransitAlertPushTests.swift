import Crypto
import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

/// Service alerts matched to favourites and pushed through the real server on
/// both engines. On the sample feed: STBA runs Stagecoach ↔ Beatty Airport, CITY serves
/// Stagecoach and four town stops, AB Airport ↔ Bullfrog, AAMV Airport ↔ Amargosa Valley.
@Suite struct TransitAlertPushTests {
    /// One alert notification as stored.
    struct Sent: Decodable, Equatable {
        var userID: String
        var collapseKey: String?
        var threadID: String?
        var category: String?
        var interruptionLevel: String?
        var pushSuppressed: String?
        var expiresAt: Int64?
        var createdAt: Int64
        var data: String

        enum CodingKeys: String, CodingKey {
            case category, data
            case userID = "user_id"
            case collapseKey = "collapse_key"
            case threadID = "thread_id"
            case interruptionLevel = "interruption_level"
            case pushSuppressed = "push_suppressed"
            case expiresAt = "expires_at"
            case createdAt = "created_at"
        }

        var json: JSONValue { (try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8))) ?? .null }
    }

    static func sent(_ s: TestSession) async throws -> [Sent] {
        try await s.runtime.database.withConnection { db in
            try await db.raw("SELECT * FROM notifications WHERE type = 'service_alert' ORDER BY created_at, user_id").all(decoding: Sent.self)
        }
    }

    static func pushDeliveries(_ s: TestSession) async throws -> [String: Int] {
        try await s.runtime.database.withConnection { db in
            var counts: [String: Int] = [:]
            for row in try await db.raw(
                "SELECT n.user_id FROM notification_deliveries d JOIN notifications n ON n.id = d.notification_id WHERE d.channel = 'push' AND n.type = 'service_alert'"
            ).all() {
                counts[try row.decode(column: "user_id", as: String.self), default: 0] += 1
            }
            return counts
        }
    }

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

    @Test(arguments: TestEngine.allCases)
    func aRouteAlertReachesServedStopsOnceAndAChangeOnceMore(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            for (user, stop) in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT"), ("cat", "AMV"), ("eve", "BULLFROG"), ("eve", "STAGECOACH")] {
                try await Self.favorite(s, user, stop)
            }
            try await Self.favorite(s, "dan", "STAGECOACH", enabled: false)
            for user in ["ann", "bob", "cat", "dan", "eve"] { try await Self.device(s, user) }
            try await Self.postAlerts(s, [Self.alert("stba-delay", route: "STBA", header: "Shuttle delayed")])
            try await Self.run(s)
            let first = try await Self.sent(s)
            #expect(first.map(\.userID) == ["ann", "bob", "eve"])
            let ann = try #require(first.first)
            #expect(ann.collapseKey == "stba-delay" && ann.threadID == "stba-delay" && ann.category == "SERVICE_ALERT")
            #expect(ann.interruptionLevel == "time-sensitive")
            #expect(ann.expiresAt == Self.now * 1000 + 3_600_000)
            #expect(ann.json["alert_id"] == "stba-delay" && ann.json["route_id"] == "STBA" && ann.json["severity"] == "major")
            #expect(ann.json["deep_link"] == "transitapp://alerts/stba-delay")
            #expect(ann.json["title_loc_key"] == "ALERT_TITLE_DELAY" && ann.json["title_loc_args"] == ["30"])
            #expect(try await Self.pushDeliveries(s) == ["ann": 1, "bob": 1, "eve": 1])
            // The feed repeats the alert unchanged: nobody hears again.
            try await Self.postAlerts(s, [Self.alert("stba-delay", route: "STBA", header: "Shuttle delayed")], at: Self.now + 30)
            try await Self.run(s)
            #expect(try await Self.sent(s).count == 3)
            // It changes: one more push each, replacing the first on the device.
            try await Self.postAlerts(s, [Self.alert("stba-delay", route: "STBA", header: "Shuttle delayed 20 minutes")], at: Self.now + 60)
            try await Self.run(s)
            let second = try await Self.sent(s)
            #expect(second.count == 6)
            #expect(second.map(\.userID).sorted() == ["ann", "ann", "bob", "bob", "eve", "eve"])
            #expect(Set(second.map(\.collapseKey)) == ["stba-delay"])
            #expect(try await Self.pushDeliveries(s) == ["ann": 2, "bob": 2, "eve": 2])
            // Inside the cooldown the change is quiet: passive (no sound), marked an update.
            let changed = second.filter { $0.createdAt > ann.createdAt || $0.json["update"] != nil }
            #expect(changed.count == 3 && changed.allSatisfy { $0.interruptionLevel == "passive" && $0.json["update"] == true })
            // Running again (a retry, another node) changes nothing.
            try await Self.run(s)
            #expect(try await Self.sent(s).count == 6)
            let metrics = try await s.request(.get, "/metrics")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("herald_transit_alert_versions_total 2"))
            #expect(text.contains("herald_transit_alert_pushes_queued_total 6"))
            #expect(text.contains("herald_transit_alert_matched_users_total 6"))
            // The read receipt marks the user's notifications read.
            let annToken = try await s.token("ann")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened", token: annToken).status == 204)
            #expect(try await s.request(.get, "/api/v1/notifications/unread-count", token: annToken).data?["count"] == 0)
            // Opened from the app's list by a rider it was never pushed to: nothing to mark, no error
            // (the transit app sends the receipt for every alert it opens); only an alert Herald never had is 404.
            let catToken = try await s.token("cat")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened", token: catToken).status == 204)
            #expect(try await s.request(.post, "/api/v1/alerts/no-such-alert/opened", token: catToken).errorCode == "ALERT_NOT_FOUND")
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/opened").status == 401)
        }
    }

    /// The cooldown's escalation rule through the server: a later version at the same
    /// severity is quiet, a cancellation sounds, and after the window a change sounds again.
    @Test func aCancellationInsideTheCooldownSoundsAndTheWindowEnds() async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(.sqlite, clock: clock, configure: Self.quiet) { s in
            _ = try await s.importSample()
            try await Self.favorite(s, "ann", "STAGECOACH")
            // A phone to hear it: a version that reached only the inbox starts no window.
            try await Self.device(s, "ann")
            func levels() async throws -> [String?] { try await Self.sent(s).map(\.interruptionLevel) }
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "Delayed")])
            try await Self.run(s)
            // (The clock moves between versions, so the notifications sort by when they were made.)
            clock.advance(by: 10)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "Delayed more")], at: Self.now + 10)
            try await Self.run(s)
            let two = try await levels()
            #expect(two == ["time-sensitive", "passive"])
            clock.advance(by: 10)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", severity: .severe, effect: .noService, header: "Cancelled")], at: Self.now + 20)
            try await Self.run(s)
            let three = try await levels()
            #expect(three == ["time-sensitive", "passive", "time-sensitive"])
            // Back to a delay, still inside the window of the loudest push: quiet.
            clock.advance(by: 10)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "Running again, delayed")], at: Self.now + 30)
            try await Self.run(s)
            let four = try await levels()
            #expect(four.last == "passive")
            // Thirty-one minutes after the cancellation, a change sounds again.
            clock.advance(by: 31 * 60)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "Delays easing")], at: Self.now + 31 * 60)
            try await Self.run(s)
            let five = try await levels()
            #expect(five.count == 5 && five.last == "time-sensitive")
        }
    }

    /// Route favourites and stops narrowed to routes, through the API and the matcher.
    @Test func favouriteRoutesAndStopsNarrowedToRoutes() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            let ann = try await s.token("ann")
            let bob = try await s.token("bob")
            let cat = try await s.token("cat")
            // Ann follows route AB wherever she is; Bob Beatty Airport for the STBA shuttle only;
            // Cat Beatty Airport for every route.
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

            func recipients(_ id: String) async throws -> [String] {
                try await Self.sent(s).filter { $0.json["alert_id"] == .string(id) }.map(\.userID).sorted()
            }
            // A trip of route AB (Airport → Bullfrog): Ann by her route, Cat by her stop, not Bob.
            try await Self.postAlerts(s, [Self.alert("ab1", trip: "AB1")])
            try await Self.run(s)
            #expect(try await recipients("ab1") == ["ann", "cat"])
            // The shuttle: Bob and Cat, not Ann.
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA")], at: Self.now + 10)
            try await Self.run(s)
            #expect(try await recipients("stba") == ["bob", "cat"])
            // The airport itself: every favourite of the stop hears, narrowed or not; a route does not.
            try await Self.postAlerts(s, [Self.alert("lift", stop: "BEATTY_AIRPORT")], at: Self.now + 20)
            try await Self.run(s)
            #expect(try await recipients("lift") == ["bob", "cat"])
            // Bob widens his favourite to every route (null), Cat narrows hers; a route favourite cannot be narrowed.
            let bobs = try #require(narrowed.data?["id"]?.stringValue)
            let widened = try await s.request(.patch, "/api/v1/favorites/\(bobs)", token: bob, json: ["route_ids": .null])
            #expect(widened.status == 200 && widened.data?["route_ids"] == .null)
            let annsRoute = try #require(route.data?["id"]?.stringValue)
            #expect(try await s.request(.patch, "/api/v1/favorites/\(annsRoute)", token: ann, json: ["route_ids": ["AB"]]).errorCode == "VALIDATION_FAILED")
            let cats = try #require(try await s.request(.get, "/api/v1/favorites", token: cat).data?["favorites"]?[0]?["id"]?.stringValue)
            #expect(try await s.request(.patch, "/api/v1/favorites/\(cats)", token: cat, json: ["route_ids": ["AB"]]).data?["route_ids"] == ["AB"])
            try await Self.postAlerts(s, [Self.alert("stba-2", route: "STBA")], at: Self.now + 30)
            try await Self.run(s)
            #expect(try await recipients("stba-2") == ["bob"])
        }
    }

    @Test func stopStationTripAndAgencyWideAlerts() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            for (user, stop) in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT"), ("cat", "AMV"), ("dan", "NANAA"), ("eve", "BULLFROG")] {
                try await Self.favorite(s, user, stop)
            }
            func recipients(_ id: String) async throws -> [String] {
                try await Self.sent(s).filter { $0.json["alert_id"]?.stringValue == id }.map(\.userID).sorted()
            }
            try await Self.postAlerts(
                s,
                [
                    Self.alert("stop-bullfrog", stop: "BULLFROG"), Self.alert("trip-city1", trip: "CITY1"),
                    Self.alert("agency-wide", agency: "DTA", severity: .severe, effect: .noService),
                    Self.alert("nowhere", stop: "NOPE"),
                ])
            try await Self.run(s)
            #expect(try await recipients("stop-bullfrog") == ["eve"])
            #expect(try await recipients("trip-city1") == ["ann", "dan"])
            #expect(try await recipients("agency-wide") == ["ann", "bob", "cat", "dan", "eve"])
            #expect(try await recipients("nowhere") == [])
            let agency = try #require(try await Self.sent(s).first { $0.json["alert_id"] == "agency-wide" })
            #expect(agency.json["severity"] == "cancelled" && agency.expiresAt == Self.now * 1000 + 7_200_000)
            // A backend's alert is pushed the same way.
            let svc = try await s.token("ops", .service)
            let posted = try await s.request(
                .post, "/api/v1/alerts", token: svc,
                json: ["alert_id": "posted-1", "severity": "info", "header": "Lift out at the airport", "affected_stops": ["BEATTY_AIRPORT"]])
            #expect(posted.status == 201)
            try await Self.run(s)
            #expect(try await recipients("posted-1") == ["bob"])
            let info = try #require(try await Self.sent(s).first { $0.json["alert_id"] == "posted-1" })
            #expect(info.interruptionLevel == "active" && info.json["severity"] == "minor" && info.expiresAt == Self.now * 1000 + 1_800_000)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func mutedFavouritesAndMuteForADay(engine: TestEngine) async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(engine, clock: clock, configure: Self.quiet) { s in
            _ = try await s.importSample()
            // Ann's Stagecoach is switched off but her airport is not; Bob has only Stagecoach, off.
            try await Self.favorite(s, "ann", "STAGECOACH", enabled: false)
            try await Self.favorite(s, "ann", "BEATTY_AIRPORT")
            try await Self.favorite(s, "bob", "STAGECOACH", enabled: false)
            try await Self.favorite(s, "cat", "STAGECOACH")
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "v1", end: Self.now + 3 * 86_400)])
            try await Self.run(s)
            #expect(try await Self.sent(s).map(\.userID) == ["ann", "cat"])
            // Cat mutes the alert for a day (MUTE_24H): its next version passes her by.
            let cat = try await s.token("cat")
            let muted = try await s.request(.post, "/api/v1/alerts/stba/mute", token: cat)
            #expect(muted.status == 201)
            #expect(muted.data?["muted"]?[0]?["kind"] == "alert" && muted.data?["muted"]?[0]?["id"] == "stba")
            #expect(try await s.request(.post, "/api/v1/alerts/stba/mute", token: cat, json: ["scope": "everything"]).status == 422)
            #expect(try await s.request(.get, "/api/v1/alerts/mutes", token: cat).data?["mutes"]?.arrayValue?.count == 1)
            #expect(try await s.request(.post, "/api/v1/alerts/nope/mute", token: cat).errorCode == "ALERT_NOT_FOUND")
            #expect(try await s.request(.post, "/api/v1/alerts/stba/mute", token: cat, json: ["hours": 0]).status == 422)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "v2", end: Self.now + 3 * 86_400)], at: Self.now + 60)
            try await Self.run(s)
            #expect(try await Self.sent(s).map(\.userID).sorted() == ["ann", "ann", "cat"])
            // A CITY alert reaches her Stagecoach through another route: it is not muted.
            try await Self.postAlerts(
                s, [Self.alert("stba", route: "STBA", header: "v2", end: Self.now + 3 * 86_400), Self.alert("city", route: "CITY", header: "City")],
                at: Self.now + 90)
            try await Self.run(s)
            #expect(try await Self.sent(s).filter { $0.json["alert_id"] == "city" }.map(\.userID) == ["cat"])
            // 25 hours later the mute is over.
            clock.advance(by: 25 * 3600)
            try await Self.postAlerts(s, [Self.alert("stba", route: "STBA", header: "v3", end: Self.now + 3 * 86_400)], at: Self.now + 25 * 3600)
            try await Self.run(s)
            #expect(try await Self.sent(s).filter { $0.json["alert_id"] == "stba" }.map(\.userID).sorted() == ["ann", "ann", "ann", "cat", "cat"])
            // (A new token: the clock moved past the first one's hour.)
            let later = try await s.token("cat")
            #expect(try await s.request(.delete, "/api/v1/alerts/stba/mute", token: later).status == 204)
            #expect(try await s.request(.delete, "/api/v1/alerts/stba/mute", token: later).errorCode == "ALERT_NOT_FOUND")
        }
    }

    /// MUTE_24H silences the alert, not the line (issue 39): another alert about the same
    /// route still arrives. A rider who mutes the route (`scope: routes`) hears no more of it
    /// for the day, except a cancellation.
    @Test func muteSilencesTheAlertAndARouteMuteLetsCancellationsThrough() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: Self.quiet) { s in
            _ = try await s.importSample()
            for user in ["cat", "dan"] { try await Self.favorite(s, user, "STAGECOACH") }
            var alerts = [Self.alert("stba-delay", route: "STBA", header: "Late")]
            try await Self.postAlerts(s, alerts)
            try await Self.run(s)
            #expect(try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: try await s.token("cat")).status == 201)
            let routeMute = try await s.request(.post, "/api/v1/alerts/stba-delay/mute", token: try await s.token("dan"), json: ["scope": "routes"])
            #expect(routeMute.data?["muted"]?[0]?["kind"] == "route" && routeMute.data?["muted"]?[0]?["id"] == "STBA")
            // A later version of the muted alert, and another delay on the same route.
            alerts = [Self.alert("stba-delay", route: "STBA", header: "Later"), Self.alert("stba-detour", route: "STBA", header: "Detour")]
            try await Self.postAlerts(s, alerts, at: Self.now + 60)
            try await Self.run(s)
            func recipients(_ id: String) async throws -> [String] {
                try await Self.sent(s).filter { $0.json["alert_id"]?.stringValue == id }.map(\.userID).sorted()
            }
            #expect(try await recipients("stba-delay") == ["cat", "dan"], "the first version only")
            #expect(try await recipients("stba-detour") == ["cat"], "cat muted one alert, dan the route")
            // A cancellation on the muted route still reaches Dan.
            alerts.append(Self.alert("stba-cancel", route: "STBA", severity: .severe, effect: .noService, header: "No shuttle"))
            try await Self.postAlerts(s, alerts, at: Self.now + 120)
            try await Self.run(s)
            #expect(try await recipients("stba-cancel") == ["cat", "dan"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func quietHoursLetCancellationsThroughAndSendADigest(engine: TestEngine) async throws {
        // 2007-06-05 23:05 in Los Angeles.
        let night = sampleMorning.addingTimeInterval(15 * 3600)
        let clock = ManualClock(night)
        let at = Int64(night.timeIntervalSince1970)
        try await TestServer.run(engine, clock: clock, configure: Self.quiet) { s in
            _ = try await s.importSample()
            for user in ["ann", "bob", "cat", "dan"] { try await Self.favorite(s, user, "STAGECOACH") }
            for user in ["ann", "bob", "cat", "dan"] { try await Self.device(s, user) }
            let quiet: JSONValue = ["quiet_hours": ["enabled": true, "start": "22:00", "end": "07:00"], "time_zone": "America/Los_Angeles"]
            #expect(try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("ann"), json: quiet).status == 200)
            #expect(
                try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("bob"), json: ["severity_floor": "alert"]).status == 200
            )
            #expect(
                try await s.request(.put, "/api/v1/notifications/preferences", token: try await s.token("cat"), json: ["time_sensitive_allowed": false]).status
                    == 200)
            try await Self.postAlerts(s, [Self.alert("delay", route: "STBA", header: "Late shuttle", start: at - 60, end: at + 12 * 3600)], at: at)
            try await Self.run(s)
            let delay = Dictionary(uniqueKeysWithValues: try await Self.sent(s).map { ($0.userID, $0) })
            #expect(delay["ann"]?.pushSuppressed == "quiet_hours")
            #expect(delay["bob"]?.pushSuppressed == "severity_floor")
            #expect(delay["cat"]?.pushSuppressed == nil && delay["cat"]?.interruptionLevel == "active")
            #expect(delay["dan"]?.pushSuppressed == nil && delay["dan"]?.interruptionLevel == "time-sensitive")
            #expect(try await Self.pushDeliveries(s) == ["cat": 1, "dan": 1])
            // A cancellation passes quiet hours (and Bob's floor).
            try await Self.postAlerts(
                s,
                [
                    Self.alert("delay", route: "STBA", header: "Late shuttle", start: at - 60, end: at + 12 * 3600),
                    Self.alert("cancel", route: "CITY", severity: .severe, effect: .noService, header: "No city buses", start: at - 60, end: at + 12 * 3600),
                ], at: at + 10)
            try await Self.run(s)
            #expect(try await Self.pushDeliveries(s) == ["ann": 1, "bob": 1, "cat": 2, "dan": 2])
            // At 07:00 Ann gets one digest of what quiet hours held back, once.
            #expect(try await s.runtime.transit.alerts.digest.sendDue() == 0)
            clock.set(Date(timeIntervalSince1970: Double(at + 7 * 3600 + 55 * 60)))
            #expect(try await s.runtime.transit.alerts.digest.sendDue() == 1)
            #expect(try await s.runtime.transit.alerts.digest.sendDue() == 0)
            let digest = try #require(try await Self.sent(s).first { $0.json["digest"] == true })
            #expect(digest.userID == "ann" && digest.json["digest"] == true && digest.json["alert_ids"] == ["delay"])
            #expect(digest.pushSuppressed == nil)
            #expect(try await Self.pushDeliveries(s)["ann"] == 2)
        }
    }

    /// A batch is one send: a `batch_size` above `notifications.max_recipients` is cut to it
    /// (else every send would be refused and the alert never pushed).
    @Test func aBatchLargerThanASendMayNameIsCutToIt() async throws {
        try await TestServer.run(
            .sqlite, clock: ManualClock(sampleMorning),
            configure: {
                Self.quiet(&$0)
                $0.transit.alerts.batchSize = 5000
                $0.notifications.maxRecipients = 3
            }
        ) { s in
            _ = try await s.importSample()
            for index in 0..<7 { try await Self.favorite(s, "user\(index)", "STAGECOACH") }
            try await Self.postAlerts(s, [Self.alert("big", route: "STBA")])
            try await Self.run(s)
            #expect(try await Self.sent(s).count == 7)
        }
    }

    @Test func endedAlertsAreNotPushedAndUpcomingOnesWaitForTheirStart() async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(.sqlite, clock: clock, configure: Self.quiet) { s in
            _ = try await s.importSample()
            try await Self.favorite(s, "ann", "STAGECOACH")
            try await Self.postAlerts(
                s,
                [
                    Self.alert("over", route: "STBA", start: Self.now - 7200, end: Self.now - 3600),
                    Self.alert("tonight", route: "STBA", start: Self.now + 3600, end: Self.now + 7200),
                ])
            try await Self.run(s)
            #expect(try await Self.sent(s).isEmpty)
            clock.advance(by: 3601)
            try await Self.run(s)
            #expect(try await Self.sent(s).map { $0.json["alert_id"] } == ["tonight"])
        }
    }

    /// Two nodes (two pushers with their own node ids on one database) race for the same
    /// versions: each version is processed by exactly one of them, every user gets one push.
    @Test(arguments: TestEngine.allCases)
    func twoNodesRacingForOneVersionPushOnce(engine: TestEngine) async throws {
        try await TestServer.run(
            engine, clock: ManualClock(sampleMorning),
            configure: {
                Self.quiet(&$0)
                $0.transit.alerts.batchSize = 7
            }
        ) { s in
            _ = try await s.importSample()
            let db = s.runtime.database
            let now = sampleMorning.epochMilliseconds
            try await db.withConnection { db in
                for index in 0..<60 {
                    try await db.raw(
                        """
                        INSERT INTO transit_favorites (id, user_id, stop_id, label, sort_order, notifications_enabled, created_at, updated_at)
                        VALUES (\(bind: "fav_\(index)"), \(bind: "user\(index)"), 'STAGECOACH', NULL, 0, 1, \(bind: now), \(bind: now))
                        """
                    ).run()
                }
            }
            try await Self.postAlerts(s, [Self.alert("a1", route: "STBA"), Self.alert("a2", route: "CITY"), Self.alert("a3", stop: "STAGECOACH")])
            let transit = s.runtime.transit
            let nodes = [
                AlertPusher(transit: transit.service, notifications: s.runtime.notifications.service, nodeID: "node-a", logger: TestDatabase.logger),
                AlertPusher(transit: transit.service, notifications: s.runtime.notifications.service, nodeID: "node-b", logger: TestDatabase.logger),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for node in nodes {
                    group.addTask {
                        try await node.recordVersions()
                        try await node.processDue()
                    }
                }
                try await group.waitForAll()
            }
            let sent = try await Self.sent(s)
            #expect(sent.count == 180)
            let perVersion = Dictionary(grouping: sent) { $0.json["alert_id"]?.stringValue ?? "" }.mapValues { Set($0.map(\.userID)).count }
            #expect(perVersion == ["a1": 60, "a2": 60, "a3": 60])
            let owners = try await db.withConnection { db in
                try await db.raw("SELECT claimed_by, attempts, status FROM transit_alert_versions").all().map {
                    (
                        try $0.decode(column: "claimed_by", as: String.self), try $0.decode(column: "attempts", as: Int.self),
                        try $0.decode(column: "status", as: String.self)
                    )
                }
            }
            #expect(owners.count == 3 && owners.allSatisfy { $0.1 == 1 && $0.2 == "done" })
        }
    }

    /// A node dies after its first batch (the rows it left are what a kill -9 leaves): when its
    /// lease runs out another node finishes the version, and nobody gets a second push.
    @Test(arguments: TestEngine.allCases)
    func aCrashMidFanOutIsResumedWithoutASecondPush(engine: TestEngine) async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(
            engine, clock: clock,
            configure: {
                Self.quiet(&$0)
                $0.transit.alerts.batchSize = 4
            }
        ) { s in
            _ = try await s.importSample()
            for index in 0..<10 { try await Self.favorite(s, "user\(index)", "STAGECOACH") }
            for index in 0..<10 { try await Self.device(s, "user\(index)") }
            try await Self.postAlerts(s, [Self.alert("crash", route: "STBA")])
            let transit = s.runtime.transit
            let dying = AlertPusher(transit: transit.service, notifications: s.runtime.notifications.service, nodeID: "node-dying", logger: TestDatabase.logger)
            try await dying.recordVersions()
            let now = clock.now().epochMilliseconds
            let claimed = try await s.runtime.database.withConnection { db in
                try await AlertVersionStore().claim(
                    db, alertID: "crash", fingerprint: try #require(try await AlertVersionStore().latest(db, alertID: "crash")).fingerprint,
                    node: "node-dying", now: now, leaseUntil: now + 60_000)
            }
            let version = try #require(claimed)
            let alert = try #require(ServiceAlert(json: try JSONDecoder().decode(JSONValue.self, from: Data(version.alert.utf8))))
            let target = try await dying.matcher.audience(alert, now: now)
            #expect(target.users.count == 10)
            // Its first batch commits; then it is gone.
            #expect(try await dying.send(alert, version: version, users: Array(target.users.keys.sorted().prefix(4)), target: target, now: now) == 4)
            #expect(try await Self.sent(s).count == 4)
            // Within the lease nobody else may take it.
            try await Self.run(s)
            #expect(try await Self.sent(s).count == 4)
            clock.advance(by: 61)
            try await Self.run(s)
            let sent = try await Self.sent(s)
            #expect(sent.count == 10 && Set(sent.map(\.userID)).count == 10)
            #expect(try await Self.pushDeliveries(s).values.allSatisfy { $0 == 1 })
            let status = try await s.runtime.database.withConnection { db in
                try await AlertVersionStore().latest(db, alertID: "crash")
            }
            #expect(status?.status == .done && status?.attempts == 2 && status?.matchedUsers == 10)
        }
    }
}
