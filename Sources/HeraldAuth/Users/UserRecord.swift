/// A user as Herald knows them: created on their first authenticated call, with the
/// settings other modules need (the time zone for quiet hours, the locale for pushes).
public struct UserRecord: Sendable, Equatable, Codable {
    public var id: String
    public var role: String
    public var displayName: String?
    public var locale: String?
    public var timeZone: String
    /// E.164 (`+14155550123`), only shown to the driver of the user's active job.
    public var phone: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, role: String, displayName: String?, locale: String?, timeZone: String, phone: String? = nil, createdAt: Int64, updatedAt: Int64
    ) {
        self.phone = phone
        self.id = id
        self.role = role
        self.displayName = displayName
        self.locale = locale
        self.timeZone = timeZone
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, role, locale, phone
        case displayName = "display_name"
        case timeZone = "time_zone"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
