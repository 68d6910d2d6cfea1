/// One page of `GET /api/v1/notifications`.
public struct InboxPage: Sendable, Equatable, Decodable {
    public let notifications: [InboxNotification]
    public let total: Int
    public let unreadCount: Int
    public let offset: Int
    public let limit: Int

    enum CodingKeys: String, CodingKey {
        case notifications, total, offset, limit
        case unreadCount = "unread_count"
    }
}
