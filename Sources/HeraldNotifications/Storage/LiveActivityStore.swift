import HeraldCore
import HeraldPush
import HeraldStorage
import SQLKit

/// A push-to-start token (`live_activity_start_tokens`).
public struct LiveActivityStartTokenRecord: Sendable, Equatable, Codable {
    public var appID: String
    public var token: String
    public var userID: String
    public var kind: LiveActivityKind
    public var environment: APNsEnvironment?
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case token, kind, environment
        case appID = "app_id"
        case userID = "user_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public init(appID: String, token: String, userID: String, kind: LiveActivityKind, environment: APNsEnvironment?, now: Int64) {
        self.appID = appID
        self.token = token
        self.userID = userID
        self.kind = kind
        self.environment = environment
        createdAt = now
        updatedAt = now
    }
}

/// The `live_activities` and `live_activity_start_tokens` tables.
struct LiveActivityStore: Sendable {
    // MARK: Registrations

    func find(_ db: any SQLDatabase, userID: String, activityID: String) async throws -> LiveActivityRecord? {
        try await db.raw("SELECT * FROM live_activities WHERE user_id = \(bind: userID) AND activity_id = \(bind: activityID)")
            .first(decoding: LiveActivityRecord.self)
    }

    func list(_ db: any SQLDatabase, userID: String, limit: Int) async throws -> [LiveActivityRecord] {
        try await db.raw(
            "SELECT * FROM live_activities WHERE user_id = \(bind: userID) AND mode = 'update' ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)"
        ).all(decoding: LiveActivityRecord.self)
    }

    /// Update rows of the user still taking pushes.
    func activeCount(_ db: any SQLDatabase, userID: String) async throws -> Int {
        guard
            let row = try await db.raw(
                "SELECT COUNT(*) AS n FROM live_activities WHERE user_id = \(bind: userID) AND mode = 'update' AND status = 'active'"
            ).first()
        else { return 0 }
        return Int(try row.decode(column: "n", as: Int64.self))
    }

    /// Inserts a row; with `skipConflict`, a row a unique index already holds keeps it and
    /// the answer is false.
    @discardableResult
    func insert(_ db: any SQLDatabase, _ r: LiveActivityRecord, skipConflict: Bool = false) async throws -> Bool {
        var query: SQLQueryString =
            """
            INSERT INTO live_activities (id, user_id, app_id, kind, subject_id, activity_id, mode, token, environment, token_updated_at,
                status, content, attributes, version, sent_version, important_version, alert, alert_version, ending, content_at,
                sent_timestamp, dismissal_at, due_at, lease_until, attempts, sent_count, last_sent_at, reason, created_at, updated_at)
            VALUES (\(bind: r.id), \(bind: r.userID), \(bind: r.appID), \(bind: r.kind.rawValue), \(bind: r.subjectID), \(bind: r.activityID),
                \(bind: r.mode.rawValue), \(bind: r.token), \(bind: r.environment?.rawValue), \(bind: r.tokenUpdatedAt), \(bind: r.status.rawValue),
                \(bind: r.content), \(bind: r.attributes), \(bind: r.version), \(bind: r.sentVersion), \(bind: r.importantVersion),
                \(bind: r.alert), \(bind: r.alertVersion), \(bind: r.ending), \(bind: r.contentAt), \(bind: r.sentTimestamp),
                \(bind: r.dismissalAt), \(bind: r.dueAt), \(bind: r.leaseUntil), \(bind: r.attempts), \(bind: r.sentCount),
                \(bind: r.lastSentAt), \(bind: r.reason), \(bind: r.createdAt), \(bind: r.updatedAt))
            """
        guard skipConflict else {
            try await db.raw(query).run()
            return true
        }
        query.appendInterpolation(unsafeRaw: " ON CONFLICT DO NOTHING RETURNING id")
        return try await db.raw(query).first() != nil
    }

    /// A rotated token (or another app build's environment) for a registered activity.
    func updateToken(_ db: any SQLDatabase, id: String, token: String, appID: String, environment: APNsEnvironment?, now: Int64) async throws
        -> LiveActivityRecord?
    {
        try await db.raw(
            """
            UPDATE live_activities SET token = \(bind: token), app_id = \(bind: appID), environment = \(bind: environment?.rawValue),
                token_updated_at = \(bind: now), updated_at = \(bind: now)
            WHERE id = \(bind: id) RETURNING *
            """
        ).first(decoding: LiveActivityRecord.self)
    }

    /// The app ended the activity itself: nothing more is pushed to it.
    func cancel(_ db: any SQLDatabase, userID: String, activityID: String, now: Int64) async throws -> LiveActivityRecord? {
        try await db.raw(
            """
            UPDATE live_activities SET status = CASE WHEN status = 'active' THEN 'cancelled' ELSE status END, due_at = NULL,
                updated_at = \(bind: now)
            WHERE user_id = \(bind: userID) AND activity_id = \(bind: activityID) RETURNING *
            """
        ).first(decoding: LiveActivityRecord.self)
    }

    // MARK: Changes

    /// The rows a change of the subject applies to, locked on PostgreSQL until the
    /// transaction ends (a concurrent change waits and then reads this one's result).
    func following(_ db: any SQLDatabase, engine: DatabaseEngine, kind: LiveActivityKind, subjectID: String) async throws -> [LiveActivityRecord] {
        var query = SQLQueryString(
            "SELECT * FROM live_activities WHERE kind = \(bind: kind.rawValue) AND subject_id = \(bind: subjectID) AND status = 'active'")
        if engine == .postgres { query.appendInterpolation(unsafeRaw: " FOR UPDATE") }
        return try await db.raw(query).all(decoding: LiveActivityRecord.self)
    }

    /// Writes what a change made of a row read by `following` (in the same transaction).
    func saveChange(_ db: any SQLDatabase, _ r: LiveActivityRecord) async throws {
        try await db.raw(
            """
            UPDATE live_activities SET status = \(bind: r.status.rawValue), content = \(bind: r.content), version = \(bind: r.version),
                important_version = \(bind: r.importantVersion), alert = \(bind: r.alert), alert_version = \(bind: r.alertVersion),
                ending = \(bind: r.ending), content_at = \(bind: r.contentAt), dismissal_at = \(bind: r.dismissalAt), due_at = \(bind: r.dueAt),
                updated_at = \(bind: r.updatedAt)
            WHERE id = \(bind: r.id)
            """
        ).run()
    }

    // MARK: Sending

    /// Leases up to `limit` due rows (a row whose lease ran out is due again: the claim sets
    /// `due_at` to the lease's end) and counts the attempt.
    func claim(_ db: any SQLDatabase, engine: DatabaseEngine, now: Int64, leaseUntil: Int64, limit: Int) async throws -> [LiveActivityRecord] {
        let lock = engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        var query = SQLQueryString("WITH due AS (SELECT id FROM live_activities WHERE due_at <= ")
        query.appendInterpolation(bind: now)
        query.appendInterpolation(unsafeRaw: " ORDER BY due_at LIMIT ")
        query.appendInterpolation(bind: limit)
        query.appendInterpolation(unsafeRaw: lock + ") UPDATE live_activities SET lease_until = ")
        query.appendInterpolation(bind: leaseUntil)
        query.appendInterpolation(unsafeRaw: ", due_at = ")
        query.appendInterpolation(bind: leaseUntil)
        query.appendInterpolation(unsafeRaw: ", attempts = attempts + 1 WHERE id IN (SELECT id FROM due) RETURNING *")
        return try await db.raw(query).all(decoding: LiveActivityRecord.self)
    }

    /// How one push ended, for `finish`.
    enum Outcome: Sendable, Equatable {
        case sent(version: Int64, timestamp: Int64)
        case retry(at: Int64, reason: String)
        case gone(reason: String)
        case failed(reason: String)
        /// A retired channel was deleted at APNs.
        case channelDeleted
    }

    /// Records a push's outcome on the row it was claimed from, if the lease is still this
    /// sender's. After a push APNs took, a version that arrived meanwhile is due at once when
    /// important, else a routine interval later (`LiveActivityPolicy.dueAfterSend`).
    func finish(_ db: any SQLDatabase, id: String, lease: Int64, outcome: Outcome, routineIntervalMs: Int64, now: Int64) async throws {
        switch outcome {
        case .sent(let version, let timestamp):
            try await db.raw(
                """
                UPDATE live_activities SET sent_version = \(bind: version), sent_timestamp = \(bind: timestamp), last_sent_at = \(bind: now),
                    sent_count = sent_count + 1, attempts = 0, lease_until = NULL, reason = NULL,
                    status = CASE WHEN mode = 'start' THEN 'started' WHEN ending = 1 AND version = \(bind: version) THEN 'ended' ELSE status END,
                    due_at = CASE WHEN mode = 'start' OR version = \(bind: version) THEN NULL
                        WHEN important_version > \(bind: version) THEN \(bind: now) ELSE \(bind: now + routineIntervalMs) END,
                    updated_at = \(bind: now)
                WHERE id = \(bind: id) AND lease_until = \(bind: lease)
                """
            ).run()
        case .retry(let at, let reason):
            try await db.raw(
                """
                UPDATE live_activities SET due_at = \(bind: at), lease_until = NULL, reason = \(bind: reason), updated_at = \(bind: now)
                WHERE id = \(bind: id) AND lease_until = \(bind: lease)
                """
            ).run()
        case .channelDeleted:
            try await channelDeleted(db, id: id, lease: lease, now: now)
        case .gone(let reason), .failed(let reason):
            let status: LiveActivityStatus = if case .gone = outcome { .gone } else { .failed }
            try await db.raw(
                """
                UPDATE live_activities SET status = \(bind: status.rawValue), due_at = NULL, lease_until = NULL, reason = \(bind: reason),
                    updated_at = \(bind: now)
                WHERE id = \(bind: id) AND lease_until = \(bind: lease)
                """
            ).run()
        }
    }

    // MARK: Push-to-start tokens

    func saveStartToken(_ db: any SQLDatabase, _ t: LiveActivityStartTokenRecord) async throws -> (LiveActivityStartTokenRecord, created: Bool) {
        let existing = try await db.raw(
            "SELECT token FROM live_activity_start_tokens WHERE app_id = \(bind: t.appID) AND token = \(bind: t.token)"
        ).first()
        guard
            let stored = try await db.raw(
                """
                INSERT INTO live_activity_start_tokens (app_id, token, user_id, kind, environment, created_at, updated_at)
                VALUES (\(bind: t.appID), \(bind: t.token), \(bind: t.userID), \(bind: t.kind.rawValue), \(bind: t.environment?.rawValue),
                    \(bind: t.createdAt), \(bind: t.updatedAt))
                ON CONFLICT (app_id, token) DO UPDATE SET user_id = excluded.user_id, kind = excluded.kind,
                    environment = excluded.environment, updated_at = excluded.updated_at
                RETURNING *
                """
            ).first(decoding: LiveActivityStartTokenRecord.self)
        else { throw StoreError.noRowReturned }
        return (stored, existing == nil)
    }

    func startTokens(_ db: any SQLDatabase, userIDs: [String], kind: LiveActivityKind) async throws -> [LiveActivityStartTokenRecord] {
        guard !userIDs.isEmpty else { return [] }
        var query = SQLQueryString("SELECT * FROM live_activity_start_tokens WHERE kind = \(bind: kind.rawValue) AND user_id IN ")
        query.appendInList(userIDs)
        query.appendInterpolation(unsafeRaw: " ORDER BY user_id, updated_at DESC")
        return try await db.raw(query).all(decoding: LiveActivityStartTokenRecord.self)
    }

    func startTokens(_ db: any SQLDatabase, userID: String) async throws -> [LiveActivityStartTokenRecord] {
        try await db.raw("SELECT * FROM live_activity_start_tokens WHERE user_id = \(bind: userID) ORDER BY kind, updated_at DESC")
            .all(decoding: LiveActivityStartTokenRecord.self)
    }

    /// Keeps the user's newest `keep` tokens of a kind (an app reinstalled many times leaves old ones).
    func trimStartTokens(_ db: any SQLDatabase, userID: String, kind: LiveActivityKind, keep: Int) async throws {
        let tokens = try await db.raw(
            """
            SELECT app_id, token FROM live_activity_start_tokens WHERE user_id = \(bind: userID) AND kind = \(bind: kind.rawValue)
            ORDER BY updated_at DESC
            """
        ).all()
        for row in tokens.dropFirst(keep) {
            let app = try row.decode(column: "app_id", as: String.self)
            let token = try row.decode(column: "token", as: String.self)
            try await deleteStartToken(db, appID: app, token: token)
        }
    }

    func deleteStartToken(_ db: any SQLDatabase, appID: String, token: String) async throws {
        try await db.raw("DELETE FROM live_activity_start_tokens WHERE app_id = \(bind: appID) AND token = \(bind: token)").run()
    }

    func deleteStartTokens(_ db: any SQLDatabase, userID: String, kind: LiveActivityKind) async throws -> Int {
        try await db.raw(
            "DELETE FROM live_activity_start_tokens WHERE user_id = \(bind: userID) AND kind = \(bind: kind.rawValue) RETURNING token"
        ).all().count
    }
}
