/// `GET /api/v1/me`: who the token belongs to.
public struct HeraldUser: Sendable, Equatable, Decodable {
    public let id: String
    public let role: String
    public let displayName: String?
    public let locale: String?
    public let timeZone: String?

    enum CodingKeys: String, CodingKey {
        case id, role, locale
        case displayName = "display_name"
        case timeZone = "time_zone"
    }
}
