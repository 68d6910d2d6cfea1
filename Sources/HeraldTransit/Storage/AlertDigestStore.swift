import HeraldStorage
import SQLKit

/// Alerts quiet hours held back from a user, kept for one summary push when the quiet
/// hours end (`transit_alert_digests`).
struct AlertDigestStore: Sendable {
    init() {}

    func add(_ db: any SQLDatabase, userID: String, alertID: String, fingerprint: String, dueAt: Int64, now: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO transit_alert_digests (user_id, alert_id, fingerprint, due_at, created_at)
            VALUES (\(bind: userID), \(bind: alertID), \(bind: fingerprint), \(bind: dueAt), \(bind: now))
            ON CONFLICT (user_id, alert_id) DO UPDATE SET fingerprint = excluded.fingerprint, due_at = excluded.due_at
            """
        ).run()
    }

    /// Users with a digest due.
    func dueUsers(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [String] {
        try await db.raw("SELECT DISTINCT user_id FROM transit_alert_digests WHERE due_at <= \(bind: now) ORDER BY user_id LIMIT \(bind: limit)")
            .all().map { try $0.decode(column: "user_id", as: String.self) }
    }

    /// Takes a user's due entries (deletes and returns them): the node whose delete returns
    /// rows sends the digest, inside the same transaction.
    func take(_ db: any SQLDatabase, userID: String, now: Int64) async throws -> [(alertID: String, fingerprint: String)] {
        try await db.raw(
            "DELETE FROM transit_alert_digests WHERE user_id = \(bind: userID) AND due_at <= \(bind: now) RETURNING alert_id, fingerprint"
        ).all().map { (try $0.decode(column: "alert_id", as: String.self), try $0.decode(column: "fingerprint", as: String.self)) }
    }
}
