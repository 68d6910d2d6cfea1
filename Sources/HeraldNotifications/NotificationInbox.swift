import Foundation
import HeraldCore
import HeraldRealtime
import HeraldStorage

/// A user's inbox: listing, counts, read state and deletion. Every read-state change is
/// published to the user's room, so the user's other devices update at once.
public struct NotificationInbox: Sendable {
    let service: NotificationService

    public init(service: NotificationService) {
        self.service = service
    }

    var database: any Database { service.database }

    public struct Page: Sendable {
        public var notifications: [NotificationRecord]
        public var total: Int
        public var unread: Int
    }

    public func list(userID: String, offset: Int, limit: Int, unreadOnly: Bool) async throws -> Page {
        try await database.withConnection { db in
            let store = NotificationStore()
            let items = try await store.list(db, userID: userID, offset: offset, limit: limit, unreadOnly: unreadOnly)
            let counts = try await store.counts(db, userID: userID)
            return Page(notifications: items, total: unreadOnly ? counts.unread : counts.total, unread: counts.unread)
        }
    }

    public func unreadCount(userID: String) async throws -> Int {
        try await database.withConnection { db in try await NotificationStore().unreadCount(db, userID: userID) }
    }

    /// Unread notifications for a `sync` (created after `since` when given), newest first.
    public func unread(userID: String, since: Int64?) async throws -> [NotificationRecord] {
        let limit = service.config.syncLimit
        return try await database.withConnection { db in
            try await NotificationStore().unread(db, userID: userID, since: since, limit: limit)
        }
    }

    /// Marks one notification read; nil when the user has no such notification. Reading an
    /// already-read notification is not an error and announces nothing.
    public func markRead(userID: String, id: String) async throws -> NotificationRecord? {
        let now = service.clock.now().epochMilliseconds
        let (record, changed) = try await database.transaction { db -> (NotificationRecord?, Bool) in
            let changed = try await NotificationStore().markRead(db, userID: userID, ids: [id], now: now)
            return (try await NotificationStore().find(db, id: id, userID: userID), !changed.isEmpty)
        }
        if let record, changed, let readAt = record.readAt {
            await announce(
                "notification_read", ["notification_id": .string(id), "read_at": .string(Timestamp.string(epochMilliseconds: readAt))],
                userID: userID)
        }
        return record
    }

    /// Marks several read; returns the ids that were unread until now.
    public func markRead(userID: String, ids: [String]) async throws -> [String] {
        let now = service.clock.now().epochMilliseconds
        let unique = Array(Set(ids)).sorted()
        let changed = try await database.transaction { db in
            try await NotificationStore().markRead(db, userID: userID, ids: unique, now: now)
        }
        if !changed.isEmpty {
            await announce(
                "notifications_bulk_read",
                ["notification_ids": .array(changed.sorted().map(JSONValue.string)), "read_at": .string(Timestamp.string(epochMilliseconds: now))],
                userID: userID)
        }
        return changed
    }

    /// Soft-deletes; false when the user has no such notification.
    public func delete(userID: String, id: String) async throws -> Bool {
        let now = service.clock.now().epochMilliseconds
        let deleted = try await database.withConnection { db in
            try await NotificationStore().softDelete(db, userID: userID, id: id, now: now)
        }
        if deleted { await announce("notification_deleted", ["notification_id": .string(id)], userID: userID) }
        return deleted
    }

    /// Read and deleted ids one `resync` reports at most, each.
    public static let maxSyncChanges = 1000

    /// The `sync` payload: `{notifications, unread_count, synced_at, has_more}`, and for a
    /// `resync {last_sync_at}` also `{read_ids, deleted_ids, changes_truncated}`.
    ///
    /// Why the changes: a device that was away must learn what the user's other devices read or
    /// deleted meanwhile, not only what is new, or its badge and list stay wrong until a reload.
    /// `notifications` holds at most `sync_limit` unread ones, newest first; `has_more` says more
    /// exist (page them with `GET /api/v1/notifications?unread_only=true&offset=…`), and
    /// `changes_truncated` that the change lists were cut (reload the inbox over REST).
    /// `synced_at` is read before the queries, so the next resync from it misses nothing.
    public func syncPayload(userID: String, since: Int64?) async throws -> JSONValue {
        let syncedAt = service.clock.now().epochMilliseconds
        let limit = service.config.syncLimit
        let (items, count, changes) = try await database.withConnection { db in
            let store = NotificationStore()
            let items = try await store.unread(db, userID: userID, since: since, limit: limit + 1)
            let count = try await store.unreadCount(db, userID: userID)
            var changes: (read: [String], deleted: [String])?
            if let since { changes = try await store.changes(db, userID: userID, since: since, limit: Self.maxSyncChanges + 1) }
            return (items, count, changes)
        }
        var payload: [String: JSONValue] = [
            "notifications": .array(items.prefix(limit).map(NotificationJSON.object)),
            "unread_count": .number(Double(count)),
            "synced_at": .string(Timestamp.string(epochMilliseconds: syncedAt)),
            "has_more": .bool(items.count > limit),
        ]
        if let changes {
            payload["read_ids"] = .array(changes.read.prefix(Self.maxSyncChanges).map(JSONValue.string))
            payload["deleted_ids"] = .array(changes.deleted.prefix(Self.maxSyncChanges).map(JSONValue.string))
            payload["changes_truncated"] = .bool(changes.read.count > Self.maxSyncChanges || changes.deleted.count > Self.maxSyncChanges)
        }
        return .object(payload)
    }

    private func announce(_ event: String, _ payload: [String: JSONValue], userID: String) async {
        var payload = payload
        if let count = try? await unreadCount(userID: userID) { payload["unread_count"] = .number(Double(count)) }
        do {
            try await service.hub.publish(event, payload: .object(payload), to: RoomName.user(userID))
        } catch {
            service.logger.warning("announcing a read failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
