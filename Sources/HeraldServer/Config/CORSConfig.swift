import HeraldCore

/// Which web pages on other origins may call Herald from a browser (REST, Socket.IO
/// long-polling) and open its WebSockets.
///
/// Why a list and no wildcard by default: a browser attaches whatever the page's script asks
/// for, so the server, not the page, decides which sites are trusted. Non-browser clients
/// (apps, services) send no `Origin` and are not affected.
public struct CORSConfig: ConfigSection, Sendable, Equatable {
    /// Exact origins (`https://app.example.com`), an origin with any port
    /// (`http://localhost:*`), or `*` (any origin, never with `allow_credentials`). Nil: none,
    /// except loopback pages (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`)
    /// while the server runs on its development secret (neither `auth.jwt_secret` nor
    /// `auth.jwks_file` is set).
    public var allowedOrigins: [String]?
    /// Let pages send cookies and read responses to credentialed requests
    /// (`Access-Control-Allow-Credentials: true`). Herald authenticates with bearer tokens, so
    /// pages rarely need it.
    public var allowCredentials = false
    /// How long a browser may reuse a preflight answer.
    public var maxAgeSeconds = 600

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("cors")
        for origin in allowedOrigins ?? [] {
            checks.check(
                origin == "*" || CORSPolicy.OriginPattern(origin) != nil, "allowed_origins",
                "\(origin) is not an origin (scheme://host[:port], scheme://host:* or *)")
        }
        checks.check(
            !(allowCredentials && (allowedOrigins ?? []).contains("*")), "allow_credentials",
            "cannot be true with the origin * (browsers refuse it; list the origins)")
        checks.check((0...86_400).contains(maxAgeSeconds), "max_age_seconds", "must be between 0 and 86400")
        return checks.errors
    }
}
