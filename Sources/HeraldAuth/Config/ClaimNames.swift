/// `auth.role_claim`: one claim name, or a list tried in order.
///
/// Why both spellings: most deployments read one claim (`role`), and a file written for
/// that keeps working; Supabase needs two (`app_metadata.role` for drivers and operators,
/// then `role`, which is `authenticated` for everyone else).
public struct ClaimNames: Codable, Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    public var names: [String]

    public init(_ names: [String]) { self.names = names }
    public init(stringLiteral value: String) { names = [value] }
    public init(arrayLiteral elements: String...) { names = elements }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            names = [one]
        } else {
            names = try container.decode([String].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if names.count == 1 { try container.encode(names[0]) } else { try container.encode(names) }
    }
}
