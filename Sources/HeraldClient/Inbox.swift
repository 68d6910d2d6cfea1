import Foundation

/// The user's inbox as a screen shows it: the newest notifications with their read state and
/// the unread count, kept current by the realtime connection (new notifications, reads and
/// deletions on the user's other devices, the `sync` sent on each connect).
///
/// Why an actor with snapshots: a view reads one consistent `InboxSnapshot` (list and count
/// together) from `snapshots()` instead of two values that may disagree for a moment.
public actor Inbox {
    let client: HeraldClient
    public private(set) var notifications: [InboxNotification] = []
    public private(set) var unreadCount = 0
    private let listeners = Listeners<InboxSnapshot>()

    public init(client: HeraldClient) {
        self.client = client
    }

    public var snapshot: InboxSnapshot { InboxSnapshot(notifications: notifications, unreadCount: unreadCount) }

    /// The inbox as it changes, starting with the current state.
    public func snapshots() -> AsyncStream<InboxSnapshot> {
        listeners.stream(current: snapshot, buffering: 1)
    }

    /// Loads the newest page (pull to refresh, first appearance).
    public func refresh(limit: Int = 50) async throws {
        let page = try await client.inbox(offset: 0, limit: limit)
        notifications = page.notifications
        unreadCount = page.unreadCount
        publish()
    }

    /// Marks one read here at once and on the server (which tells the user's other devices).
    public func markRead(_ id: String) async throws {
        let read = try await client.markRead(id)
        if let index = notifications.firstIndex(where: { $0.id == id }), !notifications[index].isRead {
            notifications[index].readAt = read.readAt ?? Date()
            unreadCount = max(0, unreadCount - 1)
        }
        publish()
    }

    /// Keeps the inbox current from `connection` until the calling task is cancelled.
    public func follow(_ connection: RealtimeConnection) async {
        for await message in await connection.messages() { apply(message) }
    }

    /// Applies one realtime message (the ones that are not about the inbox are ignored).
    public func apply(_ message: RealtimeMessage) {
        switch message.type {
        case "notification":
            guard let payload = message.payload, let notification = try? payload.decode(InboxNotification.self) else { return }
            if let index = notifications.firstIndex(where: { $0.id == notification.id }) {
                notifications[index] = notification
            } else {
                notifications.insert(notification, at: 0)
                if !notification.isRead { unreadCount += 1 }
            }
            if let count = payload["unread_count"]?.number { unreadCount = Int(count) }
        case "notification_read":
            guard let id = message.payload?["notification_id"]?.string else { return }
            markedRead([id], at: message.payload?["read_at"]?.string)
        case "notifications_bulk_read":
            guard case .array(let ids)? = message.payload?["notification_ids"] else { return }
            markedRead(ids.compactMap(\.string), at: message.payload?["read_at"]?.string)
        case "notification_deleted":
            guard let id = message.payload?["notification_id"]?.string, let index = notifications.firstIndex(where: { $0.id == id }) else { return }
            if !notifications[index].isRead { unreadCount = max(0, unreadCount - 1) }
            notifications.remove(at: index)
        case "sync":
            // The unread ones (newest first) and the count, sent on each connect.
            if case .array(let items)? = message.raw["notifications"] {
                for item in items.reversed() {
                    guard let notification = try? item.decode(InboxNotification.self) else { continue }
                    if let index = notifications.firstIndex(where: { $0.id == notification.id }) {
                        notifications[index] = notification
                    } else {
                        notifications.append(notification)
                    }
                }
                notifications.sort { $0.createdAt > $1.createdAt }
            }
            if let count = message.raw["unread_count"]?.number { unreadCount = Int(count) }
        default:
            return
        }
        publish()
    }

    private func markedRead(_ ids: [String], at time: String?) {
        let when = time.flatMap(Timestamps.parse) ?? Date()
        for id in ids {
            guard let index = notifications.firstIndex(where: { $0.id == id }), !notifications[index].isRead else { continue }
            notifications[index].readAt = when
            unreadCount = max(0, unreadCount - 1)
        }
    }

    private func publish() {
        listeners.yield(snapshot)
    }
}
