import Foundation
import HeraldCore
import HeraldNotifications
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

/// Service alerts matched to favourites and pushed, through transit's owners on both engines
/// (`TransitHarness`): who an alert reaches, what its notification says, cooldowns, mutes,
/// quiet hours and digests, and once-only across passes and nodes. The routes' own concerns
/// (statuses, JSON, error codes, who may call) stay in the server's `TransitAlertPushTests`.
@Suite struct AlertPushFlowTests {
    static let now = TransitHarness.now

    /// A route alert reaches the favourites of the stops the route serves once; a repeat is
    /// silent and a change reaches them once more, quietly inside the cooldown.
    @Test(arguments: TestEngine.allCases)
    func aRouteAlertReachesServedStopsOnceAndAChangeOnceMore(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            for (user, stop) in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT"), ("cat", "AMV"), ("eve", "BULLFROG"), ("eve", "STAGECOACH")] {
                try await h.favorite(user, stop)
            }
            try await h.favorite("dan", "STAGECOACH", enabled: false)
            for user in ["ann", "bob", "cat", "dan", "eve"] { try await h.device(user) }
            try await h.postAlerts([TransitHarness.alert("stba-delay", route: "STBA", header: "Shuttle delayed")])
            try await h.runPass()
            let first = try await h.sent()
            #expect(first.map(\.userID) == ["ann", "bob", "eve"])
            let ann = try #require(first.first)
            #expect(ann.collapseKey == "stba-delay" && ann.threadID == "stba-delay" && ann.category == "SERVICE_ALERT")
            #expect(ann.interruptionLevel == .timeSensitive)
            #expect(ann.expiresAt == Self.now * 1000 + 3_600_000)
            #expect(ann.json["alert_id"] == "stba-delay" && ann.json["route_id"] == "STBA" && ann.json["severity"] == "major")
            #expect(ann.json["deep_link"] == "transitapp://alerts/stba-delay")
            #expect(ann.json["title_loc_key"] == "ALERT_TITLE_DELAY" && ann.json["title_loc_args"] == ["30"])
            #expect(try await h.pushDeliveries() == ["ann": 1, "bob": 1, "eve": 1])
            // The feed repeats the alert unchanged: nobody hears again.
            try await h.postAlerts([TransitHarness.alert("stba-delay", route: "STBA", header: "Shuttle delayed")], at: Self.now + 30)
            try await h.runPass()
            #expect(try await h.sent().count == 3)
            // It changes: one more push each, replacing the first on the device.
            try await h.postAlerts([TransitHarness.alert("stba-delay", route: "STBA", header: "Shuttle delayed 20 minutes")], at: Self.now + 60)
            try await h.runPass()
            let second = try await h.sent()
            #expect(second.count == 6)
            #expect(second.map(\.userID).sorted() == ["ann", "ann", "bob", "bob", "eve", "eve"])
            #expect(Set(second.map(\.collapseKey)) == ["stba-delay"])
            #expect(try await h.pushDeliveries() == ["ann": 2, "bob": 2, "eve": 2])
            // Inside the cooldown the change is quiet: passive (no sound), marked an update.
            let changed = second.filter { $0.createdAt > ann.createdAt || $0.json["update"] != nil }
            #expect(changed.count == 3 && changed.allSatisfy { $0.interruptionLevel == .passive && $0.json["update"] == true })
            // Running again (a retry, another node) changes nothing.
            try await h.runPass()
            #expect(try await h.sent().count == 6)
            // What /metrics reports of it.
            let statistics = h.transit.statistics.snapshot
            #expect(statistics.alertVersions == 2)
            #expect(statistics.alertPushesQueued == 6)
            #expect(statistics.alertMatchedUsers == 6)
            // The read receipt marks the user's notifications read.
            _ = try await h.actions.opened(userID: "ann", alertID: "stba-delay")
            #expect(try await h.inbox.unreadCount(userID: "ann") == 0)
            // Opened from the app's list by a rider it was never pushed to: nothing to mark, no error
            // (the transit app sends the receipt for every alert it opens); only an alert Herald never had is not found.
            #expect(try await h.actions.opened(userID: "cat", alertID: "stba-delay").isEmpty)
            await #expect(throws: TransitError.alertNotFound("no-such-alert")) {
                try await h.actions.opened(userID: "cat", alertID: "no-such-alert")
            }
        }
    }

    /// The cooldown's escalation rule: a later version at the same severity is quiet, a
    /// cancellation sounds, and after the window a change sounds again.
    @Test(arguments: TestEngine.allCases)
    func aCancellationInsideTheCooldownSoundsAndTheWindowEnds(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            try await h.favorite("ann", "STAGECOACH")
            // A phone to hear it: a version that reached only the inbox starts no window.
            try await h.device("ann")
            func levels() async throws -> [InterruptionLevel?] { try await h.sent().map(\.interruptionLevel) }
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "Delayed")])
            try await h.runPass()
            // (The clock moves between versions, so the notifications sort by when they were made.)
            h.clock.advance(by: 10)
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "Delayed more")], at: Self.now + 10)
            try await h.runPass()
            #expect(try await levels() == [.timeSensitive, .passive])
            h.clock.advance(by: 10)
            try await h.postAlerts(
                [TransitHarness.alert("stba", route: "STBA", severity: .severe, effect: .noService, header: "Cancelled")], at: Self.now + 20)
            try await h.runPass()
            #expect(try await levels() == [.timeSensitive, .passive, .timeSensitive])
            // Back to a delay, still inside the window of the loudest push: quiet.
            h.clock.advance(by: 10)
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "Running again, delayed")], at: Self.now + 30)
            try await h.runPass()
            #expect(try await levels().last == .passive)
            // Thirty-one minutes after the cancellation, a change sounds again.
            h.clock.advance(by: 31 * 60)
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "Delays easing")], at: Self.now + 31 * 60)
            try await h.runPass()
            let five = try await levels()
            #expect(five.count == 5 && five.last == .timeSensitive)
        }
    }

    /// A route favourite hears its route anywhere; a stop narrowed to routes hears only those
    /// routes' alerts (and the stop's own), until it is widened.
    @Test(arguments: TestEngine.allCases)
    func favouriteRoutesAndStopsNarrowedToRoutes(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            // Ann follows route AB wherever she is; Bob Beatty Airport for the STBA shuttle only;
            // Cat Beatty Airport for every route.
            let (route, routeName) = try await h.transit.favorites.add(
                userID: "ann", place: .route("AB"), label: "Commute", notificationsEnabled: true)
            #expect(route.kind == .route && route.routeID == "AB" && route.stopID.isEmpty)
            #expect(routeName == "10")  // its short name
            let (narrowed, _) = try await h.transit.favorites.add(
                userID: "bob", place: .stop("BEATTY_AIRPORT", routes: ["STBA"]), label: nil, notificationsEnabled: true)
            #expect(narrowed.kind == .stop && narrowed.routeIDs == ["STBA"])
            let cats = try await h.favorite("cat", "BEATTY_AIRPORT")
            #expect(try await h.transit.favorites.list(userID: "ann").first?.record.kind == .route)
            // A trip of route AB (Airport → Bullfrog): Ann by her route, Cat by her stop, not Bob.
            try await h.postAlerts([TransitHarness.alert("ab1", trip: "AB1")])
            try await h.runPass()
            #expect(try await h.recipients("ab1") == ["ann", "cat"])
            // The shuttle: Bob and Cat, not Ann.
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA")], at: Self.now + 10)
            try await h.runPass()
            #expect(try await h.recipients("stba") == ["bob", "cat"])
            // The airport itself: every favourite of the stop hears, narrowed or not; a route does not.
            try await h.postAlerts([TransitHarness.alert("lift", stop: "BEATTY_AIRPORT")], at: Self.now + 20)
            try await h.runPass()
            #expect(try await h.recipients("lift") == ["bob", "cat"])
            // Bob widens his favourite to every route (nil), Cat narrows hers; a route favourite cannot be narrowed.
            let widened = try await h.transit.favorites.update(
                userID: "bob", id: narrowed.id, label: nil, notificationsEnabled: nil, sortOrder: nil, routeIDs: .some(nil))
            #expect(widened.0.routeIDs == nil)
            await #expect(throws: APIError.self) {
                try await h.transit.favorites.update(
                    userID: "ann", id: route.id, label: nil, notificationsEnabled: nil, sortOrder: nil, routeIDs: .some(["AB"]))
            }
            let catsNarrowed = try await h.transit.favorites.update(
                userID: "cat", id: cats.id, label: nil, notificationsEnabled: nil, sortOrder: nil, routeIDs: .some(["AB"]))
            #expect(catsNarrowed.0.routeIDs == ["AB"])
            try await h.postAlerts([TransitHarness.alert("stba-2", route: "STBA")], at: Self.now + 30)
            try await h.runPass()
            #expect(try await h.recipients("stba-2") == ["bob"])
        }
    }

    /// What each kind of informed entity reaches: a stop, a trip (its route's stops), an
    /// agency (everyone), a stop the feed lacks (nobody); a backend's alert is pushed the same way.
    @Test(arguments: TestEngine.allCases)
    func stopStationTripAndAgencyWideAlerts(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            for (user, stop) in [("ann", "STAGECOACH"), ("bob", "BEATTY_AIRPORT"), ("cat", "AMV"), ("dan", "NANAA"), ("eve", "BULLFROG")] {
                try await h.favorite(user, stop)
            }
            try await h.postAlerts([
                TransitHarness.alert("stop-bullfrog", stop: "BULLFROG"), TransitHarness.alert("trip-city1", trip: "CITY1"),
                TransitHarness.alert("agency-wide", agency: "DTA", severity: .severe, effect: .noService),
                TransitHarness.alert("nowhere", stop: "NOPE"),
            ])
            try await h.runPass()
            #expect(try await h.recipients("stop-bullfrog") == ["eve"])
            #expect(try await h.recipients("trip-city1") == ["ann", "dan"])
            #expect(try await h.recipients("agency-wide") == ["ann", "bob", "cat", "dan", "eve"])
            #expect(try await h.recipients("nowhere") == [])
            let agency = try #require(try await h.sent().first { $0.json["alert_id"] == "agency-wide" })
            #expect(agency.json["severity"] == "cancelled" && agency.expiresAt == Self.now * 1000 + 7_200_000)
            // A backend's alert is pushed the same way.
            let input = try PostedAlertInput.parse([
                "alert_id": "posted-1", "severity": "info", "header": "Lift out at the airport", "affected_stops": ["BEATTY_AIRPORT"],
            ])
            #expect(try await h.transit.alerts.post(input, by: "ops").created)
            try await h.runPass()
            #expect(try await h.recipients("posted-1") == ["bob"])
            let info = try #require(try await h.sent().first { $0.json["alert_id"] == "posted-1" })
            #expect(info.interruptionLevel == .active && info.json["severity"] == "minor" && info.expiresAt == Self.now * 1000 + 1_800_000)
        }
    }

    /// A favourite switched off is skipped unless another of the rider's favourites is reached;
    /// MUTE_24H passes the alert's later versions by, not other alerts, and ends after a day.
    @Test(arguments: TestEngine.allCases)
    func mutedFavouritesAndMuteForADay(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            // Ann's Stagecoach is switched off but her airport is not; Bob has only Stagecoach, off.
            try await h.favorite("ann", "STAGECOACH", enabled: false)
            try await h.favorite("ann", "BEATTY_AIRPORT")
            try await h.favorite("bob", "STAGECOACH", enabled: false)
            try await h.favorite("cat", "STAGECOACH")
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "v1", end: Self.now + 3 * 86_400)])
            try await h.runPass()
            #expect(try await h.sent().map(\.userID) == ["ann", "cat"])
            // Cat mutes the alert for a day (MUTE_24H): its next version passes her by.
            let muted = try await h.actions.mute(userID: "cat", alertID: "stba", hours: nil)
            #expect(muted.map(\.kind) == [.alert] && muted.map(\.entityID) == ["stba"])
            #expect(try await h.actions.activeMutes(userID: "cat").count == 1)
            await #expect(throws: TransitError.alertNotFound("nope")) { try await h.actions.mute(userID: "cat", alertID: "nope", hours: nil) }
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "v2", end: Self.now + 3 * 86_400)], at: Self.now + 60)
            try await h.runPass()
            #expect(try await h.sent().map(\.userID).sorted() == ["ann", "ann", "cat"])
            // A CITY alert reaches her Stagecoach through another route: it is not muted.
            try await h.postAlerts(
                [
                    TransitHarness.alert("stba", route: "STBA", header: "v2", end: Self.now + 3 * 86_400),
                    TransitHarness.alert("city", route: "CITY", header: "City"),
                ], at: Self.now + 90)
            try await h.runPass()
            #expect(try await h.recipients("city") == ["cat"])
            // 25 hours later the mute is over.
            h.clock.advance(by: 25 * 3600)
            try await h.postAlerts([TransitHarness.alert("stba", route: "STBA", header: "v3", end: Self.now + 3 * 86_400)], at: Self.now + 25 * 3600)
            try await h.runPass()
            #expect(try await h.recipients("stba") == ["ann", "ann", "ann", "cat", "cat"])
            // Lifting it removes it (even run out); there is nothing left to lift after.
            try await h.actions.unmute(userID: "cat", alertID: "stba")
            await #expect(throws: TransitError.alertNotFound("stba")) { try await h.actions.unmute(userID: "cat", alertID: "stba") }
        }
    }

    /// MUTE_24H silences the alert, not the line (issue 39): another alert about the same
    /// route still arrives. A rider who mutes the route (`scope: routes`) hears no more of it
    /// for the day, except a cancellation.
    @Test(arguments: TestEngine.allCases)
    func muteSilencesTheAlertAndARouteMuteLetsCancellationsThrough(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            for user in ["cat", "dan"] { try await h.favorite(user, "STAGECOACH") }
            var alerts = [TransitHarness.alert("stba-delay", route: "STBA", header: "Late")]
            try await h.postAlerts(alerts)
            try await h.runPass()
            #expect(try await h.actions.mute(userID: "cat", alertID: "stba-delay", hours: nil).map(\.kind) == [.alert])
            let routeMute = try await h.actions.mute(userID: "dan", alertID: "stba-delay", hours: nil, scope: .routes)
            #expect(routeMute.first?.kind == .route && routeMute.first?.entityID == "STBA")
            // A later version of the muted alert, and another delay on the same route.
            alerts = [
                TransitHarness.alert("stba-delay", route: "STBA", header: "Later"),
                TransitHarness.alert("stba-detour", route: "STBA", header: "Detour"),
            ]
            try await h.postAlerts(alerts, at: Self.now + 60)
            try await h.runPass()
            #expect(try await h.recipients("stba-delay") == ["cat", "dan"], "the first version only")
            #expect(try await h.recipients("stba-detour") == ["cat"], "cat muted one alert, dan the route")
            // A cancellation on the muted route still reaches Dan.
            alerts.append(TransitHarness.alert("stba-cancel", route: "STBA", severity: .severe, effect: .noService, header: "No shuttle"))
            try await h.postAlerts(alerts, at: Self.now + 120)
            try await h.runPass()
            #expect(try await h.recipients("stba-cancel") == ["cat", "dan"])
        }
    }

    /// Quiet hours and a rider's floor hold a delay's push (the inbox keeps it), a cancellation
    /// passes both, and what quiet hours held comes as one digest when they end.
    @Test(arguments: TestEngine.allCases)
    func quietHoursLetCancellationsThroughAndSendADigest(engine: TestEngine) async throws {
        // 2007-06-05 23:05 in Los Angeles.
        let night = TransitHarness.sampleMorning.addingTimeInterval(15 * 3600)
        let at = Int64(night.timeIntervalSince1970)
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database, clock: ManualClock(night))
            try await h.serveSample()
            for user in ["ann", "bob", "cat", "dan"] { try await h.favorite(user, "STAGECOACH") }
            for user in ["ann", "bob", "cat", "dan"] { try await h.device(user) }
            try await h.preferences("ann", ["quiet_hours": ["enabled": true, "start": "22:00", "end": "07:00"], "time_zone": "America/Los_Angeles"])
            try await h.preferences("bob", ["severity_floor": "alert"])
            try await h.preferences("cat", ["time_sensitive_allowed": false])
            try await h.postAlerts(
                [TransitHarness.alert("delay", route: "STBA", header: "Late shuttle", start: at - 60, end: at + 12 * 3600)], at: at)
            try await h.runPass()
            let delay = Dictionary(uniqueKeysWithValues: try await h.sent().map { ($0.userID, $0) })
            #expect(delay["ann"]?.pushSuppressed == .quietHours)
            #expect(delay["bob"]?.pushSuppressed == .severityFloor)
            #expect(delay["cat"]?.pushSuppressed == nil && delay["cat"]?.interruptionLevel == .active)
            #expect(delay["dan"]?.pushSuppressed == nil && delay["dan"]?.interruptionLevel == .timeSensitive)
            #expect(try await h.pushDeliveries() == ["cat": 1, "dan": 1])
            // A cancellation passes quiet hours (and Bob's floor).
            try await h.postAlerts(
                [
                    TransitHarness.alert("delay", route: "STBA", header: "Late shuttle", start: at - 60, end: at + 12 * 3600),
                    TransitHarness.alert(
                        "cancel", route: "CITY", severity: .severe, effect: .noService, header: "No city buses", start: at - 60, end: at + 12 * 3600),
                ], at: at + 10)
            try await h.runPass()
            #expect(try await h.pushDeliveries() == ["ann": 1, "bob": 1, "cat": 2, "dan": 2])
            // At 07:00 Ann gets one digest of what quiet hours held back, once.
            #expect(try await h.pusher.digest.sendDue() == 0)
            h.clock.set(Date(timeIntervalSince1970: Double(at + 7 * 3600 + 55 * 60)))
            #expect(try await h.pusher.digest.sendDue() == 1)
            #expect(try await h.pusher.digest.sendDue() == 0)
            let digest = try #require(try await h.sent().first { $0.json["digest"] == true })
            #expect(digest.userID == "ann" && digest.json["digest"] == true && digest.json["alert_ids"] == ["delay"])
            #expect(digest.pushSuppressed == nil)
            #expect(try await h.pushDeliveries()["ann"] == 2)
        }
    }

    /// A batch is one send: a `batch_size` above `notifications.max_recipients` is cut to it
    /// (else every send would be refused and the alert never pushed).
    @Test(arguments: TestEngine.allCases)
    func aBatchLargerThanASendMayNameIsCutToIt(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var config = TransitConfig()
            config.alerts.batchSize = 5000
            var notificationsConfig = NotificationsConfig()
            notificationsConfig.maxRecipients = 3
            let h = TransitHarness(database: database, config: config, notificationsConfig: notificationsConfig)
            try await h.serveSample()
            for index in 0..<7 { try await h.favorite("user\(index)", "STAGECOACH") }
            try await h.postAlerts([TransitHarness.alert("big", route: "STBA")])
            try await h.runPass()
            #expect(try await h.sent().count == 7)
        }
    }

    /// An alert whose period is over is never pushed; one still to come waits for its start.
    @Test(arguments: TestEngine.allCases)
    func endedAlertsAreNotPushedAndUpcomingOnesWaitForTheirStart(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = TransitHarness(database: database)
            try await h.serveSample()
            try await h.favorite("ann", "STAGECOACH")
            try await h.postAlerts([
                TransitHarness.alert("over", route: "STBA", start: Self.now - 7200, end: Self.now - 3600),
                TransitHarness.alert("tonight", route: "STBA", start: Self.now + 3600, end: Self.now + 7200),
            ])
            try await h.runPass()
            #expect(try await h.sent().isEmpty)
            h.clock.advance(by: 3601)
            try await h.runPass()
            #expect(try await h.sent().map { $0.json["alert_id"] } == ["tonight"])
        }
    }

    /// Two nodes (two pushers with their own node ids on one database) race for the same
    /// versions: each version is processed by exactly one of them, every user gets one push.
    @Test(arguments: TestEngine.allCases)
    func twoNodesRacingForOneVersionPushOnce(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            var config = TransitConfig()
            config.alerts.batchSize = 7
            let h = TransitHarness(database: database, config: config)
            try await h.serveSample()
            let now = TransitHarness.sampleMorning.epochMilliseconds
            try await database.withConnection { db in
                for index in 0..<60 {
                    try await db.raw(
                        """
                        INSERT INTO transit_favorites (id, user_id, stop_id, label, sort_order, notifications_enabled, created_at, updated_at)
                        VALUES (\(bind: "fav_\(index)"), \(bind: "user\(index)"), 'STAGECOACH', NULL, 0, 1, \(bind: now), \(bind: now))
                        """
                    ).run()
                }
            }
            try await h.postAlerts([
                TransitHarness.alert("a1", route: "STBA"), TransitHarness.alert("a2", route: "CITY"), TransitHarness.alert("a3", stop: "STAGECOACH"),
            ])
            let nodes = [
                AlertPusher(transit: h.transit, notifications: h.notifications, nodeID: "node-a", logger: TestDatabase.logger),
                AlertPusher(transit: h.transit, notifications: h.notifications, nodeID: "node-b", logger: TestDatabase.logger),
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
            let sent = try await h.sent()
            #expect(sent.count == 180)
            let perVersion = Dictionary(grouping: sent) { $0.json["alert_id"]?.stringValue ?? "" }.mapValues { Set($0.map(\.userID)).count }
            #expect(perVersion == ["a1": 60, "a2": 60, "a3": 60])
            let owners = try await database.withConnection { db in
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
        try await TestDatabase.with(engine) { database in
            var config = TransitConfig()
            config.alerts.batchSize = 4
            let h = TransitHarness(database: database, config: config)
            try await h.serveSample()
            for index in 0..<10 { try await h.favorite("user\(index)", "STAGECOACH") }
            for index in 0..<10 { try await h.device("user\(index)") }
            try await h.postAlerts([TransitHarness.alert("crash", route: "STBA")])
            let dying = AlertPusher(transit: h.transit, notifications: h.notifications, nodeID: "node-dying", logger: TestDatabase.logger)
            try await dying.recordVersions()
            let now = h.clock.now().epochMilliseconds
            let claimed = try await database.withConnection { db in
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
            #expect(try await h.sent().count == 4)
            // Within the lease nobody else may take it.
            try await h.runPass()
            #expect(try await h.sent().count == 4)
            h.clock.advance(by: 61)
            try await h.runPass()
            let sent = try await h.sent()
            #expect(sent.count == 10 && Set(sent.map(\.userID)).count == 10)
            #expect(try await h.pushDeliveries().values.allSatisfy { $0 == 1 })
            let status = try await database.withConnection { db in
                try await AlertVersionStore().latest(db, alertID: "crash")
            }
            #expect(status?.status == .done && status?.attempts == 2 && status?.matchedUsers == 10)
        }
    }
}
