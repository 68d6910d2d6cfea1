import Foundation
import HeraldCore

public struct AuthConfig: ConfigSection, Sendable, Equatable {
    /// HS256 secret. Nil in development: a random one is generated once and kept in the data dir.
    public var jwtSecret: String?
    /// A JWKS document with the public keys (ES256/RS256) of an external issuer
    /// (Supabase, Auth0, Firebase).
    public var jwksFile: String?
    /// The provider's JWKS URL (instead of `jwks_file`): fetched at start, kept per its
    /// `Cache-Control`, fetched again when a token names an unknown `kid` (`RemoteJWKS`).
    public var jwksURL: String?
    /// The least time between two fetches of `jwks_url`, whatever tokens arrive.
    public var jwksMinRefetchSeconds = 30
    /// When set, tokens must carry this `iss`.
    public var issuer: String?
    /// When set, tokens must carry this `aud` (or contain it in an `aud` list).
    public var audience: String?
    /// The claim holding the role, or a list of claims tried in order (`RoleMapping`): a
    /// name is looked up whole, then as a dotted path into objects (`app_metadata.role`).
    public var roleClaim: ClaimNames = "role"
    /// A claim value → the Herald role it gives (Supabase's `authenticated` → `customer`).
    /// A Herald role's own name needs no entry.
    public var roleMap: [String: String] = [:]
    /// The role given when no claim names a role; nil rejects such tokens.
    public var defaultRole: String?
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    public var leewaySeconds = 30

    public init() {}

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("auth")
        checks.check(leewaySeconds >= 0 && leewaySeconds <= 600, "leeway_seconds", "must be between 0 and 600")
        checks.check(
            (1...8).contains(roleClaim.names.count) && roleClaim.names.allSatisfy { !$0.isEmpty && $0.utf8.count <= 256 }, "role_claim",
            "must be a claim name or a list of 1 to 8 names")
        for (value, role) in roleMap.sorted(by: { $0.key < $1.key }) {
            checks.check(Self.roleNames.contains(role), "role_map.\(value)", "must be customer, driver, operator or service")
        }
        checks.check((1...3_600).contains(jwksMinRefetchSeconds), "jwks_min_refetch_seconds", "must be from 1 to 3600")
        if let url = jwksURL {
            checks.check(jwksFile == nil, "jwks_url", "cannot be set together with jwks_file")
            checks.check(Self.isAcceptableJWKSURL(url), "jwks_url", "must be an https:// URL (http:// only to localhost)")
        }
        if let secret = jwtSecret {
            checks.check(secret.utf8.count >= 32, "jwt_secret", "must be at least 32 bytes")
        }
        if let role = defaultRole {
            checks.check(Self.roleNames.contains(role), "default_role", "must be customer, driver, operator or service")
        }
        return checks.errors
    }

    /// `Role`'s raw values. (Spelled out: the config fuzz target compiles the config sections
    /// alone, without the rest of the auth module.)
    static let roleNames: Set<String> = ["customer", "driver", "operator", "service"]

    /// HTTPS, or plain HTTP to this machine: keys fetched in the clear could be swapped by
    /// anyone on the path, and with them every identity.
    static func isAcceptableJWKSURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
    }
}
