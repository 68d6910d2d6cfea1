/// The inbox at one moment: what a list and its badge show together.
public struct InboxSnapshot: Sendable, Equatable {
    public let notifications: [InboxNotification]
    public let unreadCount: Int

    public init(notifications: [InboxNotification], unreadCount: Int) {
        self.notifications = notifications
        self.unreadCount = unreadCount
    }
}
