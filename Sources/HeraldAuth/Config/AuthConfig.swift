import HeraldCore

public struct AuthConfig: ConfigSection, Sendable, Equatable {
    /// HS256 secret. Nil in development: a random one is generated once and kept in the data dir.
    public var jwtSecret: String?
    /// A JWKS document with the public keys (ES256/RS256) of an external issuer
    /// (Supabase, Auth0, Firebase).
    public var jwksFile: String?
    /// When set, tokens must carry this `iss`.
    public var issuer: String?
    /// When set, tokens must carry this `aud` (or contain it in an `aud` list).
    public var audience: String?
    /// The claim holding the role; a dotted path reaches into objects (`app_metadata.role`).
    public var roleClaim = "role"
    /// The role given when the claim is missing or not a Herald role; nil rejects such tokens.
    public var defaultRole: String?
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    public var leewaySeconds = 30

    public init() {}

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("auth")
        checks.check(leewaySeconds >= 0 && leewaySeconds <= 600, "leeway_seconds", "must be between 0 and 600")
        checks.check(!roleClaim.isEmpty, "role_claim", "must not be empty")
        if let secret = jwtSecret {
            checks.check(secret.utf8.count >= 32, "jwt_secret", "must be at least 32 bytes")
        }
        if let role = defaultRole {
            checks.check(["customer", "driver", "operator", "service"].contains(role), "default_role", "must be customer, driver, operator or service")
        }
        return checks.errors
    }
}
