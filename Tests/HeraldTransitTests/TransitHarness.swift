import Foundation
import HeraldCore
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import HeraldTestSupport
import SQLKit
import SwiftProtobuf

@testable import HeraldGTFS
@testable import HeraldTransit

/// Transit as the server's composition root (`TransitModule`) builds it, on a real database,
/// with a hub on a local bus and the notification service (pushes stay planned in the outbox:
/// no worker runs). No loop runs either, so a test drives the alert pusher one pass at a time
/// and sees each pass finished.
///
/// The sample feed (`serveSample()`): STBA runs Stagecoach ↔ Beatty Airport, CITY serves
/// Stagecoach and four town stops, AB Airport ↔ Bullfrog, AAMV Airport ↔ Amargosa Valley.
struct TransitHarness: Sendable {
    /// 2007-06-05 08:05 in Los Angeles (the sample feed's zone): a Tuesday, FULLW runs.
    static let sampleMorning = Date(timeIntervalSince1970: 1_181_055_900)
    /// `sampleMorning` in epoch seconds, as GTFS-Realtime writes times.
    static let now = Int64(sampleMorning.timeIntervalSince1970)

    let database: any Database
    let clock: ManualClock
    let hub: RealtimeHub
    let notifications: NotificationService
    let inbox: NotificationInbox
    let transit: TransitService
    /// This node's pusher (`node_test`); a test may make more on the same service to play other nodes.
    let pusher: AlertPusher
    let actions: AlertRiderActions

    init(
        database: any Database, clock: ManualClock = ManualClock(TransitHarness.sampleMorning), config: TransitConfig = TransitConfig(),
        notificationsConfig: NotificationsConfig = NotificationsConfig()
    ) {
        let hub = RealtimeHub(database: database, clock: clock, logger: TestDatabase.logger)
        hub.attach(bus: LocalBus(hub: hub))
        let presence = PresenceService(hub: hub, nodeID: "node_test", logger: TestDatabase.logger)
        let notifications = NotificationService(
            database: database, hub: hub, presence: presence, config: notificationsConfig, clock: clock, logger: TestDatabase.logger,
            pushQueued: {})
        let transit = TransitService(config: config, database: database, hub: hub, clock: clock, logger: TestDatabase.logger)
        // As the server wires it: riders who never sent a time zone are where the served feed's agency is.
        notifications.timeZones.useFallback { [transit] in transit.snapshot.feeds.first?.timetable.zone.identifier }
        self.database = database
        self.clock = clock
        self.hub = hub
        self.notifications = notifications
        self.inbox = NotificationInbox(service: notifications)
        self.transit = transit
        self.pusher = AlertPusher(transit: transit, notifications: notifications, nodeID: "node_test", logger: TestDatabase.logger)
        self.actions = AlertRiderActions(transit: transit, notifications: notifications)
    }

    /// Starts the loader (what the server's reload loop does first) and imports the sample feed as `default`.
    func serveSample() async throws {
        try await transit.loader.start()
        let outcome = try await transit.feeds.importFeed("default", source: .path(try TransitFixtures.sampleFeedPath()), requestedBy: "test")
        guard outcome.record.status == .succeeded else { throw Failure("the sample feed did not import: \(outcome.record.status)") }
    }

    /// One pass of the pusher's loop: records new versions and processes what is due.
    func runPass() async throws {
        try await pusher.recordVersions()
        try await pusher.processDue()
    }

    /// A stop favourite of every route at the stop, as `POST /favorites` adds it.
    @discardableResult
    func favorite(_ user: String, _ stop: String, enabled: Bool = true) async throws -> FavoriteRecord {
        try await transit.favorites.add(userID: user, stopID: stop, label: nil, notificationsEnabled: enabled).0
    }

    /// An iPhone for `user` (a token of its own), as `POST /push/register` registers it.
    func device(_ user: String) async throws {
        let token = user.utf8.map { String(format: "%02x", $0) }.joined().padding(toLength: 64, withPad: "0", startingAt: 0)
        let body: [String: JSONValue] = ["token": .string(token), "provider": "apns", "platform": "ios", "device_id": .string("phone-\(user)")]
        _ = try await DeviceRegistry(database: database, clock: clock).register(userID: user, body: body, userAgent: nil)
    }

    /// Changes a rider's notification settings, as `PUT /notifications/preferences` does.
    func preferences(_ user: String, _ body: [String: JSONValue]) async throws {
        _ = try await PreferenceEditor(service: notifications).update(userID: user, role: "customer", body: body)
    }

    /// Takes in a GTFS-Realtime message of `entities` for the served feed, as a backend's `POST /transit/realtime` does.
    func postAlerts(_ entities: [TransitRealtime_FeedEntity], at timestamp: Int64 = TransitHarness.now) async throws {
        let feed = transit.served.defaultFeedName
        let payload = try Self.message(entities, timestamp: timestamp)
        try await transit.realtime.ingest(source: TransitRealtime.pushSource(feed: feed), feed: feed, payload: payload)
    }

    /// Every alert notification written, oldest first (then by user).
    func sent() async throws -> [NotificationRecord] {
        try await database.withConnection { db in
            try await db.raw("SELECT * FROM notifications WHERE type = 'service_alert' ORDER BY created_at, user_id")
                .all(decoding: NotificationRecord.self)
        }
    }

    /// Who got a notification of `alertID`, sorted (once per notification).
    func recipients(_ alertID: String) async throws -> [String] {
        try await sent().filter { $0.json["alert_id"]?.stringValue == alertID }.map(\.userID).sorted()
    }

    /// Push deliveries planned for alert notifications, by user.
    func pushDeliveries() async throws -> [String: Int] {
        try await database.withConnection { db in
            var counts: [String: Int] = [:]
            for row in try await db.raw(
                """
                SELECT n.user_id FROM notification_deliveries d JOIN notifications n ON n.id = d.notification_id
                WHERE d.channel = 'push' AND n.type = 'service_alert'
                """
            ).all() {
                counts[try row.decode(column: "user_id", as: String.self), default: 0] += 1
            }
            return counts
        }
    }

    // MARK: GTFS-Realtime alerts

    /// An alert entity: one informed entity of the route, stop, trip or agency given, in force
    /// from `start` to `end` (epoch seconds).
    static func alert(
        _ id: String, route: String? = nil, stop: String? = nil, trip: String? = nil, agency: String? = nil,
        severity: TransitRealtime_Alert.SeverityLevel = .warning, effect: TransitRealtime_Alert.Effect = .significantDelays, header: String = "Delays",
        start: Int64 = now - 600, end: Int64 = now + 3600
    ) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = id
        var selector = TransitRealtime_EntitySelector()
        if let route { selector.routeID = route }
        if let stop { selector.stopID = stop }
        if let trip { selector.trip.tripID = trip }
        if let agency { selector.agencyID = agency }
        entity.alert.informedEntity = [selector]
        entity.alert.severityLevel = severity
        entity.alert.effect = effect
        entity.alert.cause = .technicalProblem
        var period = TransitRealtime_TimeRange()
        period.start = UInt64(start)
        period.end = UInt64(end)
        entity.alert.activePeriod = [period]
        var text = TransitRealtime_TranslatedString.Translation()
        text.text = header
        text.language = "en"
        entity.alert.headerText.translation = [text]
        return entity
    }

    static func message(_ entities: [TransitRealtime_FeedEntity], timestamp: Int64) throws -> Data {
        var message = TransitRealtime_FeedMessage()
        message.header.gtfsRealtimeVersion = "2.0"
        message.header.timestamp = UInt64(timestamp)
        message.entity = entities
        return try message.serializedData()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension NotificationRecord {
    /// The payload (`data`) as JSON.
    var json: JSONValue { (try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8))) ?? .null }
}
