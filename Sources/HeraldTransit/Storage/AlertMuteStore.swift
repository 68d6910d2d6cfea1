import HeraldStorage
import SQLKit

/// What a timed mute silences: one alert (all its versions), a route or a stop.
public enum AlertMuteKind: String, Sendable, Codable, CaseIterable {
    case alert
    case route
    case stop
}

/// What `POST /alerts/{id}/mute` silences.
///
/// Why `alert` is the default: MUTE_24H on a delay notice means "not this again", not "nothing
/// about my line for a day"; muting the routes hid a cancellation on them an hour later.
public enum AlertMuteScope: String, Sendable, CaseIterable {
    /// This alert and its later versions.
    case alert
    /// The routes it names (a trip counts as its route), else its stops, else the routes
    /// through which it reaches the user's favourites. Cancellations (critical alerts) still
    /// arrive.
    case routes
}

/// A user's timed mute of a route or stop (the SERVICE_ALERT category's MUTE_24H action):
/// one row of `transit_alert_mutes`.
public struct AlertMuteRecord: Sendable, Equatable, Codable {
    public var userID: String
    public var kind: AlertMuteKind
    public var entityID: String
    /// Epoch ms when the mute ends.
    public var until: Int64
    public var alertID: String?
    public var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case kind
        case userID = "user_id"
        case entityID = "entity_id"
        case until = "until_at"
        case alertID = "alert_id"
        case createdAt = "created_at"
    }

    public init(userID: String, kind: AlertMuteKind, entityID: String, until: Int64, alertID: String?, createdAt: Int64) {
        self.userID = userID
        self.kind = kind
        self.entityID = entityID
        self.until = until
        self.alertID = alertID
        self.createdAt = createdAt
    }
}

struct AlertMuteStore: Sendable {
    init() {}

    /// Sets the mute (a later end replaces an earlier one).
    func upsert(_ db: any SQLDatabase, _ m: AlertMuteRecord) async throws {
        try await db.raw(
            """
            INSERT INTO transit_alert_mutes (user_id, kind, entity_id, until_at, alert_id, created_at)
            VALUES (\(bind: m.userID), \(bind: m.kind.rawValue), \(bind: m.entityID), \(bind: m.until), \(bind: m.alertID), \(bind: m.createdAt))
            ON CONFLICT (user_id, kind, entity_id) DO UPDATE SET until_at = excluded.until_at, alert_id = excluded.alert_id, created_at = excluded.created_at
            """
        ).run()
    }

    /// The user's mutes still in force.
    func active(_ db: any SQLDatabase, userID: String, now: Int64) async throws -> [AlertMuteRecord] {
        try await db.raw("SELECT * FROM transit_alert_mutes WHERE user_id = \(bind: userID) AND until_at > \(bind: now) ORDER BY kind, entity_id")
            .all(decoding: AlertMuteRecord.self)
    }

    /// The mutes in force of many users, read in IN-lists of 500.
    func active(_ db: any SQLDatabase, userIDs: [String], now: Int64) async throws -> [AlertMuteRecord] {
        var result: [AlertMuteRecord] = []
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString("SELECT * FROM transit_alert_mutes WHERE until_at > \(bind: now) AND user_id IN ")
            query.appendInList(Array(chunk))
            result += try await db.raw(query).all(decoding: AlertMuteRecord.self)
        }
        return result
    }

    /// Ends the user's mutes an alert set; returns how many.
    func delete(_ db: any SQLDatabase, userID: String, alertID: String) async throws -> Int {
        try await db.raw("DELETE FROM transit_alert_mutes WHERE user_id = \(bind: userID) AND alert_id = \(bind: alertID) RETURNING entity_id").all().count
    }
}
