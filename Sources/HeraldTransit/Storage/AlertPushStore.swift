import HeraldStorage
import SQLKit

/// Which users each alert version was sent to (`transit_alert_pushes`): the row is written in
/// the transaction that writes the user's notification, and its key (alert, version, user)
/// lets the pair happen once across retries, crashes and nodes.
struct AlertPushStore: Sendable {
    init() {}

    /// Of `userIDs`, those already sent this version.
    func alreadySent(_ db: any SQLDatabase, alertID: String, fingerprint: String, userIDs: [String]) async throws -> Set<String> {
        var sent: Set<String> = []
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString(
                "SELECT user_id FROM transit_alert_pushes WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint) AND user_id IN ")
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() { sent.insert(try row.decode(column: "user_id", as: String.self)) }
        }
        return sent
    }

    /// Records the version as sent to each user (user → notification id) unless it was:
    /// returns the users recorded now. Concurrent writers of the same pair wait for each
    /// other on the key, and the later one gets nothing back.
    /// `sounded` says whether the push made a sound (the cooldown reads it back with the
    /// alert's `severity`).
    func record(
        _ db: any SQLDatabase, alertID: String, fingerprint: String, notifications: [(userID: String, notificationID: String)],
        sounded: Bool = true, severity: AlertSeverity? = nil, now: Int64
    ) async throws -> Set<String> {
        var recorded: Set<String> = []
        for chunk in notifications.chunked(500) {
            var query = SQLQueryString(
                "INSERT INTO transit_alert_pushes (alert_id, fingerprint, user_id, notification_id, created_at, sounded, severity) VALUES ")
            for (index, entry) in chunk.enumerated() {
                query.appendInterpolation(unsafeRaw: index == 0 ? "(" : ", (")
                query.appendInterpolation(bind: alertID)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: fingerprint)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: entry.userID)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: entry.notificationID)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: now)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: sounded ? 1 : 0)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: severity?.rawValue)
                query.appendInterpolation(unsafeRaw: ")")
            }
            query.appendInterpolation(unsafeRaw: " ON CONFLICT (alert_id, fingerprint, user_id) DO NOTHING RETURNING user_id")
            for row in try await db.raw(query).all() { recorded.insert(try row.decode(column: "user_id", as: String.self)) }
        }
        return recorded
    }

    /// Each user's pushes of the alert (any version) that sounded since `since` (ms), for
    /// the cooldown. A row from before the cooldown existed has no severity: it counts as
    /// the most severe, so nothing sounds twice because of the upgrade.
    func sounded(_ db: any SQLDatabase, alertID: String, userIDs: [String], since: Int64) async throws -> [String: [AlertCooldown.Sounded]] {
        var result: [String: [AlertCooldown.Sounded]] = [:]
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString(
                "SELECT user_id, created_at, severity FROM transit_alert_pushes WHERE alert_id = \(bind: alertID) AND sounded = 1 AND created_at >= \(bind: since) AND user_id IN "
            )
            query.appendInList(Array(chunk))
            for row in try await db.raw(query).all() {
                let severity = try row.decode(column: "severity", as: String?.self).flatMap(AlertSeverity.init(rawValue:)) ?? .critical
                result[try row.decode(column: "user_id", as: String.self), default: []].append(
                    AlertCooldown.Sounded(at: try row.decode(column: "created_at", as: Int64.self), severity: severity))
            }
        }
        return result
    }

    /// Records that these users' pushes of the version did not sound after all.
    func markQuiet(_ db: any SQLDatabase, alertID: String, fingerprint: String, userIDs: [String]) async throws {
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString(
                "UPDATE transit_alert_pushes SET sounded = 0 WHERE alert_id = \(bind: alertID) AND fingerprint = \(bind: fingerprint) AND user_id IN ")
            query.appendInList(Array(chunk))
            try await db.raw(query).run()
        }
    }

    /// The notifications a user was sent about an alert (every version), newest first.
    func notifications(_ db: any SQLDatabase, alertID: String, userID: String) async throws -> [String] {
        try await db.raw(
            """
            SELECT notification_id FROM transit_alert_pushes WHERE user_id = \(bind: userID) AND alert_id = \(bind: alertID)
            ORDER BY created_at DESC
            """
        ).all().map { try $0.decode(column: "notification_id", as: String.self) }
    }

    /// Marks the user's pushes of an alert opened (the transit design's read receipt); false when
    /// the user was never sent it.
    func markOpened(_ db: any SQLDatabase, alertID: String, userID: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE transit_alert_pushes SET opened_at = COALESCE(opened_at, \(bind: now))
            WHERE user_id = \(bind: userID) AND alert_id = \(bind: alertID)
            RETURNING alert_id
            """
        ).all().count > 0
    }
}
