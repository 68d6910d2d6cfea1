import Foundation
import HeraldGTFS
import HeraldStorage
import SQLKit

/// An alert a backend posted (`POST /alerts`): one row of `transit_alerts`. Affected
/// routes and stops are JSON arrays of ids.
public struct PostedAlertRecord: Sendable, Equatable, Codable {
    public var id: String
    public var severity: String
    public var header: String
    public var description: String?
    public var cause: String
    public var effect: String
    public var url: String?
    public var affectedRoutes: String
    public var affectedStops: String
    public var activeStart: Int64?
    public var activeEnd: Int64?
    public var createdBy: String
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, severity, header, description, cause, effect, url
        case affectedRoutes = "affected_routes"
        case affectedStops = "affected_stops"
        case activeStart = "active_start"
        case activeEnd = "active_end"
        case createdBy = "created_by"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public var routeIDs: [String] { (try? JSONDecoder().decode([String].self, from: Data(affectedRoutes.utf8))) ?? [] }
    public var stopIDs: [String] { (try? JSONDecoder().decode([String].self, from: Data(affectedStops.utf8))) ?? [] }
}

struct AlertStore: Sendable {
    init() {}

    /// Alerts whose active period has not ended by `now` (a backend's alert stays until its end).
    func current(_ db: any SQLDatabase, now: Int64) async throws -> [PostedAlertRecord] {
        try await db.raw("SELECT * FROM transit_alerts WHERE active_end IS NULL OR active_end > \(bind: now) ORDER BY created_at, id")
            .all(decoding: PostedAlertRecord.self)
    }

    func find(_ db: any SQLDatabase, id: String) async throws -> PostedAlertRecord? {
        try await db.raw("SELECT * FROM transit_alerts WHERE id = \(bind: id)").first(decoding: PostedAlertRecord.self)
    }

    /// Inserts, or replaces the alert with the same id (a backend re-posting an update).
    func upsert(_ db: any SQLDatabase, _ a: PostedAlertRecord) async throws -> PostedAlertRecord {
        try await db.raw(
            """
            INSERT INTO transit_alerts (id, severity, header, description, cause, effect, url, affected_routes, affected_stops, active_start,
                active_end, created_by, created_at, updated_at)
            VALUES (\(bind: a.id), \(bind: a.severity), \(bind: a.header), \(bind: a.description), \(bind: a.cause), \(bind: a.effect), \(bind: a.url),
                \(bind: a.affectedRoutes), \(bind: a.affectedStops), \(bind: a.activeStart), \(bind: a.activeEnd), \(bind: a.createdBy),
                \(bind: a.createdAt), \(bind: a.updatedAt))
            ON CONFLICT (id) DO UPDATE SET severity = excluded.severity, header = excluded.header, description = excluded.description,
                cause = excluded.cause, effect = excluded.effect, url = excluded.url, affected_routes = excluded.affected_routes,
                affected_stops = excluded.affected_stops, active_start = excluded.active_start, active_end = excluded.active_end,
                updated_at = excluded.updated_at
            RETURNING *
            """
        ).first(decoding: PostedAlertRecord.self) ?? a
    }
}
