import HeraldStorage
import SQLKit
import HeraldGTFS

/// A user's favourite stop: one row of `transit_favorites`.
public struct FavoriteRecord: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    public var stopID: String
    public var label: String?
    public var sortOrder: Int
    public var notificationsEnabled: Bool
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, label
        case userID = "user_id"
        case stopID = "stop_id"
        case sortOrder = "sort_order"
        case notificationsEnabled = "notifications_enabled"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public init(id: String, userID: String, stopID: String, label: String?, sortOrder: Int, notificationsEnabled: Bool, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.userID = userID
        self.stopID = stopID
        self.label = label
        self.sortOrder = sortOrder
        self.notificationsEnabled = notificationsEnabled
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        userID = try c.decode(String.self, forKey: .userID)
        stopID = try c.decode(String.self, forKey: .stopID)
        label = try c.decodeIfPresent(String.self, forKey: .label)
        sortOrder = try c.decode(Int.self, forKey: .sortOrder)
        // An INTEGER column on both engines.
        notificationsEnabled = try c.decode(Int.self, forKey: .notificationsEnabled) != 0
        createdAt = try c.decode(Int64.self, forKey: .createdAt)
        updatedAt = try c.decode(Int64.self, forKey: .updatedAt)
    }
}

public struct FavoriteStore: Sendable {
    public init() {}

    public func list(_ db: any SQLDatabase, userID: String) async throws -> [FavoriteRecord] {
        try await db.raw("SELECT * FROM transit_favorites WHERE user_id = \(bind: userID) ORDER BY sort_order, created_at, id").all(decoding: FavoriteRecord.self)
    }

    public func find(_ db: any SQLDatabase, id: String, userID: String) async throws -> FavoriteRecord? {
        try await db.raw("SELECT * FROM transit_favorites WHERE id = \(bind: id) AND user_id = \(bind: userID)").first(decoding: FavoriteRecord.self)
    }

    public func count(_ db: any SQLDatabase, userID: String) async throws -> Int {
        try await db.raw("SELECT COUNT(*) AS n FROM transit_favorites WHERE user_id = \(bind: userID)").first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Inserts unless the user already has the stop: nil then.
    public func insert(_ db: any SQLDatabase, _ f: FavoriteRecord) async throws -> FavoriteRecord? {
        try await db.raw(
            """
            INSERT INTO transit_favorites (id, user_id, stop_id, label, sort_order, notifications_enabled, created_at, updated_at)
            VALUES (\(bind: f.id), \(bind: f.userID), \(bind: f.stopID), \(bind: f.label), \(bind: f.sortOrder), \(bind: f.notificationsEnabled ? 1 : 0),
                \(bind: f.createdAt), \(bind: f.updatedAt))
            ON CONFLICT (user_id, stop_id) DO NOTHING
            RETURNING *
            """
        ).first(decoding: FavoriteRecord.self)
    }

    public func findByStop(_ db: any SQLDatabase, userID: String, stopID: String) async throws -> FavoriteRecord? {
        try await db.raw("SELECT * FROM transit_favorites WHERE user_id = \(bind: userID) AND stop_id = \(bind: stopID)").first(decoding: FavoriteRecord.self)
    }

    public func update(_ db: any SQLDatabase, _ f: FavoriteRecord) async throws {
        try await db.raw(
            """
            UPDATE transit_favorites SET label = \(bind: f.label), sort_order = \(bind: f.sortOrder),
                notifications_enabled = \(bind: f.notificationsEnabled ? 1 : 0), updated_at = \(bind: f.updatedAt)
            WHERE id = \(bind: f.id) AND user_id = \(bind: f.userID)
            """
        ).run()
    }

    public func setOrder(_ db: any SQLDatabase, id: String, userID: String, sortOrder: Int, now: Int64) async throws {
        try await db.raw(
            "UPDATE transit_favorites SET sort_order = \(bind: sortOrder), updated_at = \(bind: now) WHERE id = \(bind: id) AND user_id = \(bind: userID)"
        ).run()
    }

    /// Every favourite at one of `stopIDs` (the alert matcher's reverse lookup, on the
    /// `(stop_id)` index), read in IN-lists of 500.
    public func atStops(_ db: any SQLDatabase, stopIDs: [String]) async throws -> [AlertAudience.Favorite] {
        var result: [AlertAudience.Favorite] = []
        for chunk in stopIDs.sorted().chunked(500) {
            var query = SQLQueryString("SELECT user_id, stop_id, notifications_enabled FROM transit_favorites WHERE stop_id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                result.append(
                    AlertAudience.Favorite(
                        userID: try row.decode(column: "user_id", as: String.self), stopID: try row.decode(column: "stop_id", as: String.self),
                        notificationsEnabled: try row.decode(column: "notifications_enabled", as: Int.self) != 0))
            }
        }
        return result
    }

    public func delete(_ db: any SQLDatabase, id: String, userID: String) async throws -> Bool {
        try await db.raw("DELETE FROM transit_favorites WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id").first() != nil
    }
}
