import Foundation
import HeraldGTFS
import HeraldStorage
import SQLKit

/// What a favourite is of.
public enum FavoriteKind: String, Sendable, CaseIterable {
    /// A stop, every route at it or only some (`routeIDs`).
    case stop
    /// A whole route: its alerts reach the rider wherever they are on it.
    case route
}

/// A user's favourite stop or route: one row of `transit_favorites`.
///
/// Why one table for both: the app shows one ordered list, and `sort_order` is numbered
/// across it. A route favourite keeps `stop_id` empty (and a stop favourite `route_id`), so
/// the unique index on (user, stop, route) refuses the same favourite twice of either kind.
public struct FavoriteRecord: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    /// Empty for a route favourite.
    public var stopID: String
    /// The favourite route (nil for a stop favourite).
    public var routeID: String?
    /// A stop favourite narrowed to these routes at the stop (nil: every route).
    public var routeIDs: [String]?
    public var label: String?
    public var sortOrder: Int
    public var notificationsEnabled: Bool
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, label
        case userID = "user_id"
        case stopID = "stop_id"
        case routeID = "route_id"
        case routeIDs = "route_ids"
        case sortOrder = "sort_order"
        case notificationsEnabled = "notifications_enabled"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public init(
        id: String, userID: String, stopID: String, routeID: String? = nil, routeIDs: [String]? = nil, label: String?, sortOrder: Int,
        notificationsEnabled: Bool, createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.userID = userID
        self.stopID = stopID
        self.routeID = routeID
        self.routeIDs = routeIDs
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
        let route = try c.decodeIfPresent(String.self, forKey: .routeID) ?? ""
        routeID = route.isEmpty ? nil : route
        routeIDs = try c.decodeIfPresent(String.self, forKey: .routeIDs).flatMap(Self.decodeRoutes)
        label = try c.decodeIfPresent(String.self, forKey: .label)
        sortOrder = try c.decode(Int.self, forKey: .sortOrder)
        // An INTEGER column on both engines.
        notificationsEnabled = try c.decode(Int.self, forKey: .notificationsEnabled) != 0
        createdAt = try c.decode(Int64.self, forKey: .createdAt)
        updatedAt = try c.decode(Int64.self, forKey: .updatedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(userID, forKey: .userID)
        try c.encode(stopID, forKey: .stopID)
        try c.encode(routeID ?? "", forKey: .routeID)
        try c.encodeIfPresent(routeIDs.map(Self.encodeRoutes), forKey: .routeIDs)
        try c.encodeIfPresent(label, forKey: .label)
        try c.encode(sortOrder, forKey: .sortOrder)
        try c.encode(notificationsEnabled ? 1 : 0, forKey: .notificationsEnabled)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }

    public var kind: FavoriteKind { routeID == nil ? .stop : .route }

    /// `route_ids` as stored: a JSON array of strings.
    static func encodeRoutes(_ routes: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(routes)) ?? Data("[]".utf8), as: UTF8.self)
    }

    static func decodeRoutes(_ text: String) -> [String]? {
        try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }
}

struct FavoriteStore: Sendable {
    init() {}

    func list(_ db: any SQLDatabase, userID: String) async throws -> [FavoriteRecord] {
        try await db.raw("SELECT * FROM transit_favorites WHERE user_id = \(bind: userID) ORDER BY sort_order, created_at, id").all(
            decoding: FavoriteRecord.self)
    }

    func find(_ db: any SQLDatabase, id: String, userID: String) async throws -> FavoriteRecord? {
        try await db.raw("SELECT * FROM transit_favorites WHERE id = \(bind: id) AND user_id = \(bind: userID)").first(decoding: FavoriteRecord.self)
    }

    func count(_ db: any SQLDatabase, userID: String) async throws -> Int {
        try await db.raw("SELECT COUNT(*) AS n FROM transit_favorites WHERE user_id = \(bind: userID)").first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Inserts unless the user already has the stop: nil then.
    func insert(_ db: any SQLDatabase, _ f: FavoriteRecord) async throws -> FavoriteRecord? {
        try await db.raw(
            """
            INSERT INTO transit_favorites (id, user_id, stop_id, route_id, route_ids, label, sort_order, notifications_enabled, created_at, updated_at)
            VALUES (\(bind: f.id), \(bind: f.userID), \(bind: f.stopID), \(bind: f.routeID ?? ""), \(bind: f.routeIDs.map(FavoriteRecord.encodeRoutes)),
                \(bind: f.label), \(bind: f.sortOrder), \(bind: f.notificationsEnabled ? 1 : 0), \(bind: f.createdAt), \(bind: f.updatedAt))
            ON CONFLICT (user_id, stop_id, route_id) DO NOTHING
            RETURNING *
            """
        ).first(decoding: FavoriteRecord.self)
    }

    /// The user's favourite of this stop or route (as `record` names it).
    func findSame(_ db: any SQLDatabase, as record: FavoriteRecord) async throws -> FavoriteRecord? {
        try await db.raw(
            """
            SELECT * FROM transit_favorites
            WHERE user_id = \(bind: record.userID) AND stop_id = \(bind: record.stopID) AND route_id = \(bind: record.routeID ?? "")
            """
        ).first(decoding: FavoriteRecord.self)
    }

    func update(_ db: any SQLDatabase, _ f: FavoriteRecord) async throws {
        try await db.raw(
            """
            UPDATE transit_favorites SET label = \(bind: f.label), sort_order = \(bind: f.sortOrder), route_ids = \(bind: f.routeIDs.map(FavoriteRecord.encodeRoutes)),
                notifications_enabled = \(bind: f.notificationsEnabled ? 1 : 0), updated_at = \(bind: f.updatedAt)
            WHERE id = \(bind: f.id) AND user_id = \(bind: f.userID)
            """
        ).run()
    }

    func setOrder(_ db: any SQLDatabase, id: String, userID: String, sortOrder: Int, now: Int64) async throws {
        try await db.raw(
            "UPDATE transit_favorites SET sort_order = \(bind: sortOrder), updated_at = \(bind: now) WHERE id = \(bind: id) AND user_id = \(bind: userID)"
        ).run()
    }

    /// Every favourite at one of `stopIDs` (the alert matcher's reverse lookup, on the
    /// `(stop_id)` index), read in IN-lists of 500.
    func atStops(_ db: any SQLDatabase, stopIDs: [String]) async throws -> [AlertAudience.Favorite] {
        try await audience(db, column: "stop_id", ids: stopIDs)
    }

    /// Every favourite of one of `routeIDs` (on the `(route_id)` index).
    func ofRoutes(_ db: any SQLDatabase, routeIDs: [String]) async throws -> [AlertAudience.Favorite] {
        try await audience(db, column: "route_id", ids: routeIDs.filter { !$0.isEmpty })
    }

    private func audience(_ db: any SQLDatabase, column: String, ids: [String]) async throws -> [AlertAudience.Favorite] {
        var result: [AlertAudience.Favorite] = []
        for chunk in ids.sorted().chunked(500) {
            var query = SQLQueryString("SELECT user_id, stop_id, route_id, route_ids, notifications_enabled FROM transit_favorites WHERE ")
            query.appendInterpolation(unsafeRaw: column == "route_id" ? "route_id IN " : "stop_id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                let route = try row.decode(column: "route_id", as: String.self)
                let stop = try row.decode(column: "stop_id", as: String.self)
                result.append(
                    AlertAudience.Favorite(
                        userID: try row.decode(column: "user_id", as: String.self), stopID: stop.isEmpty ? nil : stop, routeID: route.isEmpty ? nil : route,
                        routes: try row.decode(column: "route_ids", as: String?.self).flatMap(FavoriteRecord.decodeRoutes),
                        notificationsEnabled: try row.decode(column: "notifications_enabled", as: Int.self) != 0))
            }
        }
        return result
    }

    func delete(_ db: any SQLDatabase, id: String, userID: String) async throws -> Bool {
        try await db.raw("DELETE FROM transit_favorites WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id").first() != nil
    }
}
