import HTTPTypes
import HeraldServer
import Testing

/// The origin rules, without a server: which pages may call Herald and what they are told.
@Suite struct CORSPolicyTests {
    func policy(_ origins: [String]?, credentials: Bool = false, development: Bool = false) -> CORSPolicy {
        var config = CORSConfig()
        config.allowedOrigins = origins
        config.allowCredentials = credentials
        return CORSPolicy(config, development: development)
    }

    @Test func exactOriginsAndPortWildcards() {
        let cors = policy(["https://app.example.com", "http://localhost:*", "http://[::1]:3000"])
        #expect(cors.allows(origin: "https://app.example.com"))
        #expect(cors.allows(origin: "https://APP.example.com"))
        #expect(cors.allows(origin: "https://app.example.com:443"), "the default port is the same origin")
        #expect(!cors.allows(origin: "http://app.example.com"), "another scheme is another origin")
        #expect(!cors.allows(origin: "https://app.example.com:8443"))
        #expect(!cors.allows(origin: "https://evil-app.example.com"))
        #expect(!cors.allows(origin: "https://app.example.com.evil.net"))
        #expect(cors.allows(origin: "http://localhost:5173") && cors.allows(origin: "http://localhost"))
        #expect(cors.allows(origin: "http://[::1]:3000") && !cors.allows(origin: "http://[::1]:3001"))
        for hostile in [
            "null", "", "https://app.example.com/", "https://user@app.example.com", "app.example.com", "https://app.example.com:x", "http://localhost:*",
        ] {
            #expect(!cors.allows(origin: hostile), "\(hostile)")
        }
    }

    @Test func noneByDefaultLoopbackInDevelopmentAndAnyWithStar() {
        #expect(!policy(nil).allows(origin: "http://localhost:3000"))
        #expect(policy(nil, development: true).allows(origin: "http://localhost:3000"))
        #expect(policy(nil, development: true).allows(origin: "http://127.0.0.1:8000"))
        #expect(!policy(nil, development: true).allows(origin: "https://example.com"))
        #expect(!policy([], development: true).allows(origin: "http://localhost:3000"), "a listed (empty) set replaces the development default")
        #expect(policy(["*"]).allows(origin: "https://anyone.example"))
        #expect(!policy(["*"]).allows(origin: "null"))
    }

    @Test func responseHeadersNameTheOriginAndVary() {
        let cors = policy(["https://app.example.com"], credentials: true)
        let fields = cors.responseHeaders(origin: "https://app.example.com")
        #expect(fields[.accessControlAllowOrigin] == "https://app.example.com")
        #expect(fields[.accessControlAllowCredentials] == "true")
        #expect(fields[.vary] == "Origin")
        #expect(fields[.accessControlExposeHeaders]?.contains("X-Request-ID") == true)
        let refused = cors.responseHeaders(origin: "https://evil.example")
        #expect(refused[.accessControlAllowOrigin] == nil && refused[.vary] == "Origin")
        // `*` answers `*` and never allows credentials (browsers refuse the pair).
        var star = CORSConfig()
        star.allowedOrigins = ["*"]
        star.allowCredentials = true
        let any = CORSPolicy(star, development: false).responseHeaders(origin: "https://x.example")
        #expect(any[.accessControlAllowOrigin] == "*" && any[.accessControlAllowCredentials] == nil)
        #expect(star.validationErrors().map(\.field) == ["cors.allow_credentials"])
    }

    @Test func preflightsAllowKnownMethodsAndWellFormedHeaders() {
        let cors = policy(["https://app.example.com"])
        guard
            case .allowed(let fields) = cors.preflight(
                origin: "https://app.example.com", method: "POST", requestHeaders: "authorization, content-type, idempotency-key")
        else {
            Issue.record("refused")
            return
        }
        #expect(fields[.accessControlAllowOrigin] == "https://app.example.com")
        #expect(fields[.accessControlAllowMethods]?.contains("POST") == true)
        #expect(fields[.accessControlAllowHeaders] == "authorization, content-type, idempotency-key")
        #expect(fields[.accessControlMaxAge] == "600")
        #expect(cors.preflight(origin: "https://evil.example", method: "POST", requestHeaders: nil) == .refused)
        #expect(cors.preflight(origin: "https://app.example.com", method: "TRACE", requestHeaders: nil) == .refused)
        #expect(cors.preflight(origin: "https://app.example.com", method: "GET", requestHeaders: "bad header") == .refused)
    }

    @Test func webSocketsFromBrowsersNeedAnAllowedOrSameOrigin() {
        let cors = policy(["https://app.example.com"])
        #expect(cors.allowsWebSocket(origin: nil, host: "herald.example.com"), "apps and services send no Origin")
        #expect(cors.allowsWebSocket(origin: "ws://127.0.0.1", host: "127.0.0.1:8080"), "WebSocket libraries outside browsers name ws://")
        #expect(cors.allowsWebSocket(origin: "https://app.example.com", host: "herald.example.com"))
        #expect(cors.allowsWebSocket(origin: "https://herald.example.com", host: "herald.example.com"))
        #expect(cors.allowsWebSocket(origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080"))
        #expect(!cors.allowsWebSocket(origin: "http://127.0.0.1:9090", host: "127.0.0.1:8080"))
        #expect(!cors.allowsWebSocket(origin: "https://evil.example", host: "herald.example.com"))
        #expect(!cors.allowsWebSocket(origin: "null", host: "herald.example.com"))
    }

    @Test func validationNamesOriginsThatAreNot() {
        var config = CORSConfig()
        config.allowedOrigins = ["https://ok.example", "ok.example", "https://x.example/path", "*"]
        #expect(config.validationErrors().map(\.field) == ["cors.allowed_origins", "cors.allowed_origins"])
    }
}
