import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// The delivery outbox.
///
/// Why every transition is a conditional UPDATE: several nodes run the same sweeper and
/// workers; `WHERE status = …` lets exactly one of them move a row, so an ack racing its
/// deadline, or two workers racing for a push, never both win.
@_spi(Storage) public struct DeliveryStore: Sendable {
    public init() {}

    /// Rows for `insertRows`: many deliveries in a few statements.
    public static func bulkRows(_ records: [DeliveryRecord]) -> BulkRows {
        var rows = BulkRows(
            table: "notification_deliveries",
            columns: [
                "id", "notification_id", "user_id", "channel", "device_id", "provider", "status", "attempts", "next_attempt_at", "lease_until",
                "provider_message_id", "reason", "latency_ms", "created_at", "updated_at", "completed_at",
            ], capacity: records.count)
        for d in records {
            rows.append(
                .text(d.id), .text(d.notificationID), .text(d.userID), .text(d.channel.rawValue), .text(d.deviceID), .text(d.provider?.rawValue),
                .text(d.status.rawValue),
                .integer(Int64(d.attempts)), .integer(d.nextAttemptAt), .integer(d.leaseUntil), .text(d.providerMessageID),
                .text(d.reason), .integer(d.latencyMs), .integer(d.createdAt), .integer(d.updatedAt), .integer(d.completedAt))
        }
        return rows
    }

    public func insert(_ db: any SQLDatabase, _ d: DeliveryRecord) async throws {
        try await db.raw(
            """
            INSERT INTO notification_deliveries (id, notification_id, user_id, channel, device_id, provider, status, attempts,
                next_attempt_at, lease_until, provider_message_id, reason, latency_ms, created_at, updated_at, completed_at)
            VALUES (\(bind: d.id), \(bind: d.notificationID), \(bind: d.userID), \(bind: d.channel.rawValue), \(bind: d.deviceID),
                \(bind: d.provider?.rawValue), \(bind: d.status.rawValue), \(bind: d.attempts), \(bind: d.nextAttemptAt), \(bind: d.leaseUntil),
                \(bind: d.providerMessageID), \(bind: d.reason), \(bind: d.latencyMs), \(bind: d.createdAt), \(bind: d.updatedAt),
                \(bind: d.completedAt))
            """
        ).run()
    }

    public func find(_ db: any SQLDatabase, id: String) async throws -> DeliveryRecord? {
        try await db.raw("SELECT * FROM notification_deliveries WHERE id = \(bind: id)").first(decoding: DeliveryRecord.self)
    }

    public func forNotification(_ db: any SQLDatabase, notificationID: String) async throws -> [DeliveryRecord] {
        try await db.raw(
            "SELECT * FROM notification_deliveries WHERE notification_id = \(bind: notificationID) ORDER BY created_at, id"
        ).all(decoding: DeliveryRecord.self)
    }

    /// Delivery log for operators, newest first.
    public func list(_ db: any SQLDatabase, notificationID: String?, status: DeliveryStatus?, limit: Int) async throws -> [DeliveryRecord] {
        var query = SQLQueryString("SELECT * FROM notification_deliveries WHERE 1 = 1")
        if let notificationID {
            query.appendInterpolation(unsafeRaw: " AND notification_id = ")
            query.appendInterpolation(bind: notificationID)
        }
        if let status {
            query.appendInterpolation(unsafeRaw: " AND status = ")
            query.appendInterpolation(bind: status.rawValue)
        }
        query.appendInterpolation(unsafeRaw: " ORDER BY created_at DESC, id DESC LIMIT ")
        query.appendInterpolation(bind: limit)
        return try await db.raw(query).all(decoding: DeliveryRecord.self)
    }

    // MARK: Socket deliveries

    /// Clients acknowledged these socket deliveries; returns the notification ids of those this
    /// call moved (not those already acknowledged or fallen back to push).
    public func acknowledge(_ db: any SQLDatabase, ids: [String], now: Int64) async throws -> [String] {
        var moved: [String] = []
        for chunk in Array(Set(ids)).chunked(500) {
            var query = SQLQueryString(
                """
                UPDATE notification_deliveries SET status = 'acknowledged', completed_at = \(bind: now), updated_at = \(bind: now)
                WHERE channel = 'socket' AND status = 'awaiting_ack' AND id IN
                """)
            query.appendInList(Array(chunk))
            query.appendInterpolation(unsafeRaw: " RETURNING notification_id")
            for row in try await db.raw(query).all() { moved.append(try row.decode(column: "notification_id", as: String.self)) }
        }
        return moved
    }

    /// Socket deliveries whose ack deadline has passed.
    public func overdueAcks(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [DeliveryRecord] {
        try await db.raw(
            """
            SELECT * FROM notification_deliveries WHERE status = 'awaiting_ack' AND next_attempt_at <= \(bind: now)
            ORDER BY next_attempt_at LIMIT \(bind: limit)
            """
        ).all(decoding: DeliveryRecord.self)
    }

    /// Gives up waiting for the ack; true when this call moved the row (then the caller plans
    /// the push fallback in the same transaction).
    public func markUnacknowledged(_ db: any SQLDatabase, id: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE notification_deliveries SET status = 'unacknowledged', reason = 'ack_timeout',
                completed_at = \(bind: now), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND status = 'awaiting_ack' RETURNING id
            """
        ).first() != nil
    }

    // MARK: Push deliveries

    /// Leases up to `limit` due push deliveries (sending with an expired lease — its worker
    /// died — first, then pending and due, oldest first) and counts the attempt. On
    /// PostgreSQL `SKIP LOCKED` lets several nodes' workers claim disjoint rows without
    /// waiting on each other.
    ///
    /// Why two bounded reads and not one `OR`: with an `OR` both engines read every due row
    /// and sort them to keep `limit` (SQLite's multi-index OR, then a temporary B-tree), so a
    /// queue of 20,000 pushes was read and sorted 200 times while it drained. Each read here
    /// walks the `(status, next_attempt_at)` index in order and stops at `limit`. A claimed
    /// row is due again when its lease ends (`next_attempt_at` = `lease_until`), so the
    /// expired read skips the rows in flight through the index instead of checking each
    /// (thousands while an alert's pushes are handed over); `lease_until` is checked too for
    /// rows claimed before that rule.
    public func claimPush(_ db: any SQLDatabase, engine: DatabaseEngine, now: Int64, leaseUntil: Int64, limit: Int) async throws -> [DeliveryRecord] {
        let lock = engine == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        var query = SQLQueryString("WITH expired AS (SELECT id FROM notification_deliveries WHERE status = 'sending' AND next_attempt_at < ")
        query.appendInterpolation(bind: now)
        query.appendInterpolation(unsafeRaw: " AND lease_until < ")
        query.appendInterpolation(bind: now)
        query.appendInterpolation(unsafeRaw: " ORDER BY next_attempt_at LIMIT ")
        query.appendInterpolation(bind: limit)
        query.appendInterpolation(unsafeRaw: lock + "), due AS (SELECT id FROM notification_deliveries WHERE status = 'pending' AND next_attempt_at <= ")
        query.appendInterpolation(bind: now)
        query.appendInterpolation(unsafeRaw: " ORDER BY next_attempt_at LIMIT ")
        query.appendInterpolation(bind: limit)
        query.appendInterpolation(unsafeRaw: lock + ") UPDATE notification_deliveries SET status = 'sending', attempts = attempts + 1, lease_until = ")
        query.appendInterpolation(bind: leaseUntil)
        query.appendInterpolation(unsafeRaw: ", next_attempt_at = ")
        query.appendInterpolation(bind: leaseUntil)
        query.appendInterpolation(unsafeRaw: ", updated_at = ")
        query.appendInterpolation(bind: now)
        query.appendInterpolation(unsafeRaw: " WHERE id IN (SELECT id FROM (SELECT id FROM expired UNION ALL SELECT id FROM due) AS claimable LIMIT ")
        query.appendInterpolation(bind: limit)
        query.appendInterpolation(unsafeRaw: ") RETURNING *")
        return try await db.raw(query).all(decoding: DeliveryRecord.self)
    }

    /// Gives claimed pushes that were never attempted back to the outbox, due now (the
    /// attempt they were claimed for is not counted). Only rows still `sending` change.
    public func release(_ db: any SQLDatabase, ids: [String], now: Int64) async throws {
        for chunk in ids.chunked(500) {
            var query = SQLQueryString(
                """
                UPDATE notification_deliveries SET status = 'pending', attempts = attempts - 1, lease_until = NULL,
                    next_attempt_at = \(bind: now), updated_at = \(bind: now)
                WHERE status = 'sending' AND id IN
                """)
            query.appendInList(Array(chunk))
            try await db.raw(query).run()
        }
    }

    /// How one push attempt ended, for `finishAttempts`.
    public struct AttemptEnd: Sendable, Equatable {
        public var id: String
        /// `sent`, `failed`, `dead` or `skipped` end the delivery; `pending` with `retryAt`
        /// schedules another attempt.
        public var status: DeliveryStatus
        public var providerMessageID: String?
        public var reason: String?
        public var latencyMs: Int?
        public var retryAt: Int64?

        public init(id: String, status: DeliveryStatus, providerMessageID: String? = nil, reason: String? = nil, latencyMs: Int? = nil, retryAt: Int64? = nil) {
            self.id = id
            self.status = status
            self.providerMessageID = providerMessageID
            self.reason = reason
            self.latencyMs = latencyMs
            self.retryAt = retryAt
        }
    }

    /// Records the end of many attempts in one statement per 500 (an `UPDATE … FROM` a
    /// list of values, which both engines run): one statement per delivery made the
    /// outcomes a round trip each on PostgreSQL. Only rows still `sending` (the lease
    /// holder's) change.
    public func finishAttempts(_ db: any SQLDatabase, _ ends: [AttemptEnd], now: Int64) async throws {
        for chunk in ends.chunked(500) {
            var query = SQLQueryString(
                "WITH ended (id, status, provider_message_id, reason, latency_ms, next_attempt_at, completed_at) AS (VALUES ")
            for (index, end) in chunk.enumerated() {
                // Typed explicitly: PostgreSQL cannot infer a column's type from binds alone.
                let values: [(any Encodable & Sendable, String)] = [
                    (end.id, "TEXT"), (end.status.rawValue, "TEXT"), (end.providerMessageID, "TEXT"), (end.reason, "TEXT"),
                    (end.latencyMs.map(Int64.init), "INTEGER"), (end.retryAt ?? now, "BIGINT"), (end.status != .pending ? now : nil, "BIGINT"),
                ]
                for (column, (value, type)) in values.enumerated() {
                    query.appendInterpolation(unsafeRaw: column > 0 ? ", CAST(" : (index > 0 ? ", (CAST(" : "(CAST("))
                    query.appendInterpolation(bind: value)
                    query.appendInterpolation(unsafeRaw: " AS \(type))")
                }
                query.appendInterpolation(unsafeRaw: ")")
            }
            query.appendInterpolation(
                unsafeRaw: """
                    ) UPDATE notification_deliveries SET status = ended.status, provider_message_id = ended.provider_message_id,
                        reason = ended.reason, latency_ms = ended.latency_ms, lease_until = NULL, next_attempt_at = ended.next_attempt_at,
                        completed_at = ended.completed_at, updated_at = 
                    """)
            query.appendInterpolation(bind: now)
            query.appendInterpolation(
                unsafeRaw: " FROM ended WHERE notification_deliveries.id = ended.id AND notification_deliveries.status = 'sending'")
            try await db.raw(query).run()
        }
    }

    /// Push deliveries not yet finished (for tests and the queue-depth gauge).
    public func pendingPushCount(_ db: any SQLDatabase) async throws -> Int {
        guard
            let row = try await db.raw(
                "SELECT COUNT(*) AS n FROM notification_deliveries WHERE channel = 'push' AND status IN ('pending', 'sending')"
            ).first()
        else { return 0 }
        return Int(try row.decode(column: "n", as: Int64.self))
    }
}
