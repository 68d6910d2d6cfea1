import HeraldCore
import HeraldPush
import HeraldStorage
import SQLKit

/// Broadcast channel rows (`mode = 'channel'`, no user): found by app, environment, kind and
/// subject; `token` holds APNs's channel id and `token_updated_at` when an app last asked for
/// it (what the idle sweep reads).
extension LiveActivityStore {
    func activeChannel(_ db: any SQLDatabase, appID: String, environment: APNsEnvironment, kind: LiveActivityKind, subjectID: String) async throws
        -> LiveActivityRecord?
    {
        try await db.raw(
            """
            SELECT * FROM live_activities WHERE mode = 'channel' AND status = 'active' AND app_id = \(bind: appID)
                AND environment = \(bind: environment.rawValue) AND kind = \(bind: kind.rawValue) AND subject_id = \(bind: subjectID)
            """
        ).first(decoding: LiveActivityRecord.self)
    }

    func activeChannelCount(_ db: any SQLDatabase, appID: String, environment: APNsEnvironment) async throws -> Int {
        guard
            let row = try await db.raw(
                """
                SELECT COUNT(*) AS n FROM live_activities WHERE mode = 'channel' AND status = 'active' AND app_id = \(bind: appID)
                    AND environment = \(bind: environment.rawValue)
                """
            ).first()
        else { return 0 }
        return Int(try row.decode(column: "n", as: Int64.self))
    }

    /// An app asked for the channel: it stays in use for another idle period.
    func touchChannel(_ db: any SQLDatabase, id: String, now: Int64) async throws {
        try await db.raw("UPDATE live_activities SET token_updated_at = \(bind: now) WHERE id = \(bind: id)").run()
    }

    /// Channels no app asked for since `cutoff` take no more changes and are due for deletion
    /// at APNs (the worker's claim takes them like pushes).
    func retireIdleChannels(_ db: any SQLDatabase, cutoff: Int64, now: Int64) async throws -> Int {
        try await db.raw(
            """
            UPDATE live_activities SET status = 'cancelled', reason = 'idle', due_at = \(bind: now), updated_at = \(bind: now)
            WHERE mode = 'channel' AND status = 'active' AND token_updated_at < \(bind: cutoff) RETURNING id
            """
        ).all().count
    }

    /// The worker deleted a retired channel at APNs.
    func channelDeleted(_ db: any SQLDatabase, id: String, lease: Int64, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE live_activities SET due_at = NULL, lease_until = NULL, reason = 'channel_deleted', updated_at = \(bind: now)
            WHERE id = \(bind: id) AND lease_until = \(bind: lease)
            """
        ).run()
    }

    /// The subjects followed by activities or channels of `kind` that still take changes
    /// (what the owning module computes content for).
    func followedSubjects(_ db: any SQLDatabase, kind: LiveActivityKind, limit: Int) async throws -> [String] {
        try await db.raw(
            """
            SELECT DISTINCT subject_id FROM live_activities WHERE kind = \(bind: kind.rawValue) AND status = 'active' AND mode <> 'start'
            ORDER BY subject_id LIMIT \(bind: limit)
            """
        ).all().map { try $0.decode(column: "subject_id", as: String.self) }
    }
}
