import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// The inbox: notifications, read state, soft deletion and dedupe groups.
///
/// Why every read takes the user: a notification id alone never reaches another user's
/// inbox, so "not yours" and "does not exist" are the same answer (404).
@_spi(Storage) public struct NotificationStore: Sendable {
    public init() {}

    /// Rows for `insertRows`: many recipients' notifications in a few statements.
    public static func bulkRows(_ records: [NotificationRecord]) -> BulkRows {
        var rows = BulkRows(
            table: "notifications",
            columns: [
                "id", "user_id", "type", "severity", "delivery", "title", "body", "data", "category", "thread_id", "collapse_key", "dedupe_key",
                "interruption_level", "expires_at", "created_at", "read_at", "deleted_at", "sent_via", "push_suppressed", "silent",
                "trace_parent",
            ], capacity: records.count)
        for n in records {
            rows.append(
                .text(n.id), .text(n.userID), .text(n.type), .text(n.severity.rawValue), .text(n.delivery.rawValue), .text(n.title), .text(n.body),
                .text(n.data),
                .text(n.category), .text(n.threadID), .text(n.collapseKey), .text(n.dedupeKey), .text(n.interruptionLevel?.rawValue), .integer(n.expiresAt),
                .integer(n.createdAt), .integer(n.readAt), .integer(n.deletedAt), .text(n.sentVia?.rawValue),
                .text(n.pushSuppressed?.rawValue), .integer(Int64(n.silent)), .text(n.traceParent))
        }
        return rows
    }

    public func insert(_ db: any SQLDatabase, _ n: NotificationRecord) async throws {
        try await db.raw(
            """
            INSERT INTO notifications (id, user_id, type, severity, delivery, title, body, data, category, thread_id,
                collapse_key, dedupe_key, interruption_level, expires_at, created_at, read_at, deleted_at, sent_via, push_suppressed, silent,
                trace_parent)
            VALUES (\(bind: n.id), \(bind: n.userID), \(bind: n.type), \(bind: n.severity.rawValue), \(bind: n.delivery.rawValue), \(bind: n.title),
                \(bind: n.body), \(bind: n.data), \(bind: n.category), \(bind: n.threadID), \(bind: n.collapseKey),
                \(bind: n.dedupeKey), \(bind: n.interruptionLevel?.rawValue), \(bind: n.expiresAt), \(bind: n.createdAt), \(bind: n.readAt),
                \(bind: n.deletedAt), \(bind: n.sentVia?.rawValue), \(bind: n.pushSuppressed?.rawValue), \(bind: n.silent),
                \(bind: n.traceParent))
            """
        ).run()
    }

    /// Takes the (user, dedupe key) group for `notificationID` unless another notification took
    /// it at or after `heldSince`; returns that other notification's id when it did.
    ///
    /// One statement decides, so concurrent senders of the same key agree on one winner.
    public func claimDedupe(
        _ db: any SQLDatabase, userID: String, key: String, notificationID: String, now: Int64, heldSince: Int64
    ) async throws -> String? {
        let taken = try await db.raw(
            """
            INSERT INTO notification_dedupe (user_id, dedupe_key, notification_id, created_at)
            VALUES (\(bind: userID), \(bind: key), \(bind: notificationID), \(bind: now))
            ON CONFLICT (user_id, dedupe_key) DO UPDATE
                SET notification_id = excluded.notification_id, created_at = excluded.created_at
                WHERE notification_dedupe.created_at < \(bind: heldSince)
            RETURNING notification_id
            """
        ).first()
        if taken != nil { return nil }
        return try await db.raw(
            "SELECT notification_id FROM notification_dedupe WHERE user_id = \(bind: userID) AND dedupe_key = \(bind: key)"
        ).first()?.decode(column: "notification_id", as: String.self)
    }

    /// The notification if it is the user's and not deleted (any notification with `userID` nil).
    public func find(_ db: any SQLDatabase, id: String, userID: String?) async throws -> NotificationRecord? {
        if let userID {
            return try await db.raw(
                "SELECT * FROM notifications WHERE id = \(bind: id) AND user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0"
            ).first(decoding: NotificationRecord.self)
        }
        return try await db.raw("SELECT * FROM notifications WHERE id = \(bind: id)").first(decoding: NotificationRecord.self)
    }

    /// A page of the user's inbox, newest first.
    public func list(_ db: any SQLDatabase, userID: String, offset: Int, limit: Int, unreadOnly: Bool) async throws -> [NotificationRecord] {
        var query = SQLQueryString("SELECT * FROM notifications WHERE user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0")
        if unreadOnly { query.appendInterpolation(unsafeRaw: " AND read_at IS NULL") }
        query.appendInterpolation(unsafeRaw: " ORDER BY created_at DESC, id DESC LIMIT ")
        query.appendInterpolation(bind: limit)
        query.appendInterpolation(unsafeRaw: " OFFSET ")
        query.appendInterpolation(bind: offset)
        return try await db.raw(query).all(decoding: NotificationRecord.self)
    }

    /// (all notifications, unread ones) in the user's inbox.
    public func counts(_ db: any SQLDatabase, userID: String) async throws -> (total: Int, unread: Int) {
        guard
            let row = try await db.raw(
                """
                SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread
                FROM notifications WHERE user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0
                """
            ).first()
        else { return (0, 0) }
        return (Int(try row.decode(column: "total", as: Int64.self)), Int(try row.decode(column: "unread", as: Int64.self)))
    }

    public func unreadCount(_ db: any SQLDatabase, userID: String) async throws -> Int {
        try await counts(db, userID: userID).unread
    }

    /// Unread notifications, newest first; with `since`, only those created at or after it
    /// (one created in the very millisecond of a sync may have missed it; a repeat is harmless).
    public func unread(_ db: any SQLDatabase, userID: String, since: Int64?, limit: Int) async throws -> [NotificationRecord] {
        try await db.raw(
            """
            SELECT * FROM notifications WHERE user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0 AND read_at IS NULL
            AND created_at >= \(bind: since ?? -1) ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
            """
        ).all(decoding: NotificationRecord.self)
    }

    /// The ids read and the ids deleted at or after `since` (what the user's other devices
    /// did since a device last synced), oldest change first, at most `limit` of each.
    public func changes(_ db: any SQLDatabase, userID: String, since: Int64, limit: Int) async throws -> (read: [String], deleted: [String]) {
        let read = try await db.raw(
            """
            SELECT id FROM notifications WHERE user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0
            AND read_at >= \(bind: since) ORDER BY read_at, id LIMIT \(bind: limit)
            """
        ).all().map { try $0.decode(column: "id", as: String.self) }
        let deleted = try await db.raw(
            """
            SELECT id FROM notifications WHERE user_id = \(bind: userID) AND silent = 0
            AND deleted_at >= \(bind: since) ORDER BY deleted_at, id LIMIT \(bind: limit)
            """
        ).all().map { try $0.decode(column: "id", as: String.self) }
        return (read, deleted)
    }

    /// Marks the user's notifications read; returns the ids that were unread until now
    /// (already-read, deleted and other users' ids are left alone).
    public func markRead(_ db: any SQLDatabase, userID: String, ids: [String], now: Int64) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        var query = SQLQueryString("UPDATE notifications SET read_at = \(bind: now) WHERE user_id = \(bind: userID)")
        query.appendInterpolation(unsafeRaw: " AND read_at IS NULL AND deleted_at IS NULL AND silent = 0 AND id IN (")
        for (index, id) in ids.enumerated() {
            if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
            query.appendInterpolation(bind: id)
        }
        query.appendInterpolation(unsafeRaw: ") RETURNING id")
        return try await db.raw(query).all().map { try $0.decode(column: "id", as: String.self) }
    }

    /// Soft-deletes the user's notification; false when there is none to delete.
    public func softDelete(_ db: any SQLDatabase, userID: String, id: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE notifications SET deleted_at = \(bind: now)
            WHERE id = \(bind: id) AND user_id = \(bind: userID) AND deleted_at IS NULL AND silent = 0 RETURNING id
            """
        ).first() != nil
    }

    public func setSentVia(_ db: any SQLDatabase, ids: [String], channel: SentVia) async throws {
        for chunk in Array(Set(ids)).chunked(500) {
            var query = SQLQueryString("UPDATE notifications SET sent_via = \(bind: channel.rawValue) WHERE id IN ")
            query.appendInList(Array(chunk))
            try await db.raw(query).run()
        }
    }
}

extension NotificationStore {
    /// Records that push delivered the notification, unless a socket already had.
    public func markSentViaPushIfUnset(_ db: any SQLDatabase, id: String) async throws {
        try await db.raw("UPDATE notifications SET sent_via = 'push' WHERE id = \(bind: id) AND sent_via IS NULL").run()
    }

    /// `markSentViaPushIfUnset` for many notifications in a few statements (the push worker's batches).
    public func markSentViaPushIfUnset(_ db: any SQLDatabase, ids: [String]) async throws {
        for chunk in Array(Set(ids)).chunked(500) {
            var query = SQLQueryString("UPDATE notifications SET sent_via = 'push' WHERE sent_via IS NULL AND id IN ")
            query.appendInList(Array(chunk))
            try await db.raw(query).run()
        }
    }

    /// The notifications with these ids (any user, deleted or not), by id.
    public func find(_ db: any SQLDatabase, ids: [String]) async throws -> [String: NotificationRecord] {
        Dictionary(
            try await db.rows(NotificationRecord.self, from: "notifications", where: "id", in: ids).map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
    }

    /// Unread inbox counts (the badge) for these users; a user with none is absent.
    public func unreadCounts(_ db: any SQLDatabase, userIDs: [String]) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for chunk in userIDs.chunked(500) {
            var query = SQLQueryString(
                "SELECT user_id, COUNT(*) AS unread FROM notifications WHERE deleted_at IS NULL AND silent = 0 AND read_at IS NULL AND user_id IN ")
            query.appendInList(Array(chunk))
            query.appendInterpolation(unsafeRaw: " GROUP BY user_id")
            for row in try await db.raw(query).all() {
                counts[try row.decode(column: "user_id", as: String.self)] = Int(try row.decode(column: "unread", as: Int64.self))
            }
        }
        return counts
    }
}
