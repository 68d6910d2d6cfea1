/// A user as Herald knows them: created on their first authenticated call, with the
/// settings other modules need (the time zone for quiet hours, the locale for pushes).
public struct UserRecord: Sendable, Equatable, Codable {
    public var id: String
    public var role: String
    public var displayName: String?
    public var locale: String?
    public var timeZone: String
    /// Whether the user sent `timeZone`; until then it is UTC by default and the deployment's
    /// default zone applies instead (`DefaultTimeZone`).
    public var timeZoneChosen: Bool
    /// E.164 (`+14155550123`), only shown to the driver of the user's active job.
    public var phone: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, role: String, displayName: String?, locale: String?, timeZone: String, timeZoneChosen: Bool = false, phone: String? = nil, createdAt: Int64,
        updatedAt: Int64
    ) {
        self.timeZoneChosen = timeZoneChosen
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
        case timeZoneChosen = "time_zone_chosen"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// `time_zone_chosen` is an INTEGER in both engines (PostgreSQL does not read an integer
    /// as a Bool).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        role = try c.decode(String.self, forKey: .role)
        displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        locale = try c.decodeIfPresent(String.self, forKey: .locale)
        timeZone = try c.decode(String.self, forKey: .timeZone)
        timeZoneChosen = (try c.decodeIfPresent(Int64.self, forKey: .timeZoneChosen) ?? 0) != 0
        phone = try c.decodeIfPresent(String.self, forKey: .phone)
        createdAt = try c.decode(Int64.self, forKey: .createdAt)
        updatedAt = try c.decode(Int64.self, forKey: .updatedAt)
    }
}
