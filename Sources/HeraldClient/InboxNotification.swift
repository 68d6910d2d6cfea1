import Foundation

/// One notification of the inbox, in the shape Herald sends everywhere (REST, both realtime
/// protocols, `sync`), so a row from a page and one from a live event are the same value.
public struct InboxNotification: Sendable, Equatable, Identifiable, Decodable {
    public let id: String
    public let type: String
    public let severity: String?
    public let title: String
    public let body: String?
    /// What the sender attached (a job id, a deep link), as it was sent.
    public let data: HeraldJSON?
    public let createdAt: Date
    public var readAt: Date?

    public var isRead: Bool { readAt != nil }

    enum CodingKeys: String, CodingKey {
        case id, type, severity, title, body, data
        case createdAt = "created_at"
        case readAt = "read_at"
    }
}
