import HeraldCore

/// Which Herald role a verified token's claims give.
///
/// Why configurable and not one claim named `role`: every identity provider keeps roles
/// somewhere else. Supabase sets `role: "authenticated"` on every signed-in user (its own
/// database role, not the app's) and leaves app roles to `app_metadata`; Firebase Auth puts
/// custom claims at the top level; Auth0 adds them under a namespaced claim such as
/// `https://herald.example.com/roles`, a list. So the mapping names the claims to read, in
/// order, and what their values mean to Herald.
///
/// A claim name is first looked up whole (Auth0's namespaced claims contain dots), then as
/// a dotted path into objects (`app_metadata.role`). A string value, or the first string of
/// a list that names a role, decides; a value neither mapped nor a Herald role's own name
/// is passed over to the next claim, then to `defaultRole`.
public struct RoleMapping: Sendable, Equatable {
    /// The claims to read, in order.
    public var claims: [String]
    /// A claim's value → the Herald role it gives (`authenticated` → customer). A Herald
    /// role's own name gives that role unless mapped otherwise.
    public var values: [String: Role]
    /// The role of a token no claim names a role for; nil refuses such a token.
    public var defaultRole: Role?

    public init(claims: [String] = ["role"], values: [String: Role] = [:], defaultRole: Role? = nil) {
        self.claims = claims
        self.values = values
        self.defaultRole = defaultRole
    }

    public func role(in token: [String: JSONValue]) -> Role? {
        for claim in claims {
            switch Self.value(of: claim, in: token) {
            case .string(let text)?:
                if let role = role(named: text) { return role }
            case .array(let list)?:
                for case .string(let text) in list {
                    if let role = role(named: text) { return role }
                }
            default:
                continue
            }
        }
        return defaultRole
    }

    private func role(named text: String) -> Role? {
        values[text] ?? Role(rawValue: text)
    }

    /// The claim named whole, else followed as a dotted path.
    static func value(of claim: String, in token: [String: JSONValue]) -> JSONValue? {
        if let whole = token[claim] { return whole }
        guard claim.contains(".") else { return nil }
        var current: JSONValue? = .object(token)
        for key in claim.split(separator: ".", omittingEmptySubsequences: false) {
            current = current?[String(key)]
        }
        return current
    }
}
