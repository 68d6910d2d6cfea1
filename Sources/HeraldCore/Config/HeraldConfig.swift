/// Everything Herald can be configured with: one JSON or YAML file (snake_case keys), then
/// environment variables, then command-line flags, each overriding the one before.
///
/// Why one tree: later modules (providers, notification types, dispatch pricing) add their
/// own sections here, so an operator has a single file to read and review. Every section
/// has defaults, so an empty file (or none) is a working development setup.
public struct HeraldConfig: Codable, Sendable, Equatable {
    public var server = ServerConfig()
    public var database = DatabaseConfig()
    /// Where the embedded database, the development JWT secret and other local state live.
    public var dataDir = "./herald-data"
    public var auth = AuthConfig()
    public var limits = LimitsConfig()
    public var rateLimits = RateLimitConfig()
    public var appVersions = AppVersionConfig()
    public var idempotency = IdempotencyConfig()
    public var logging = LoggingConfig()
    public var realtime = RealtimeConfig()
    public var notifications = NotificationsConfig()
    public var push = PushConfig()
    public var dispatch = DispatchConfig()
    public var payments = PaymentsConfig()
    public var trips = TripsConfig()
    public var transit = TransitConfig()

    enum CodingKeys: String, CodingKey {
        case server
        case database
        case auth
        case limits
        case idempotency
        case logging
        case realtime
        case notifications
        case push
        case dispatch
        case payments
        case trips
        case transit
        case dataDir = "data_dir"
        case rateLimits = "rate_limits"
        case appVersions = "app_versions"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&server, .server)
        try c.override(&database, .database)
        try c.override(&dataDir, .dataDir)
        try c.override(&auth, .auth)
        try c.override(&limits, .limits)
        try c.override(&rateLimits, .rateLimits)
        try c.override(&appVersions, .appVersions)
        try c.override(&idempotency, .idempotency)
        try c.override(&logging, .logging)
        try c.override(&realtime, .realtime)
        try c.override(&notifications, .notifications)
        try c.override(&push, .push)
        try c.override(&dispatch, .dispatch)
        try c.override(&payments, .payments)
        try c.override(&trips, .trips)
        try c.override(&transit, .transit)
    }
}

public struct ServerConfig: Codable, Sendable, Equatable {
    public var host = "0.0.0.0"
    public var port = 8080
    /// Take the client address for per-IP rate limits from the first `X-Forwarded-For`
    /// entry. Only turn on behind a proxy that sets it; otherwise clients can pick their IP.
    public var trustForwardedFor = false
    /// Open client connections (HTTP and sockets) at most; nil: the process's file-descriptor
    /// limit less a reserve for the database, push providers and files. Beyond it the server
    /// stops accepting until some close, rather than running out of descriptors.
    public var maxConnections: Int?
    /// Event-loop threads; nil: one per CPU the process may run on (its CPU affinity, so
    /// `taskset -c 0 herald serve` runs one loop instead of one per CPU of the machine,
    /// all fighting over that CPU).
    public var threads: Int?
    /// A new connection must finish its first request head within this time or is closed:
    /// a peer that opens connections and trickles a head (or nothing) would otherwise hold
    /// a descriptor and a connection slot for as long as it likes.
    public var requestHeadTimeoutMs = 60_000

    enum CodingKeys: String, CodingKey {
        case host
        case port
        case trustForwardedFor = "trust_forwarded_for"
        case maxConnections = "max_connections"
        case threads
        case requestHeadTimeoutMs = "request_head_timeout_ms"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&host, .host)
        try c.override(&port, .port)
        try c.override(&trustForwardedFor, .trustForwardedFor)
        try c.override(&maxConnections, .maxConnections)
        try c.override(&threads, .threads)
        try c.override(&requestHeadTimeoutMs, .requestHeadTimeoutMs)
    }
}

public struct DatabaseConfig: Codable, Sendable, Equatable {
    /// `sqlite:PATH` or `postgres://user:pass@host:port/db`; nil means
    /// `sqlite:<data_dir>/herald.sqlite`.
    public var url: String?
    /// Connection pool size on PostgreSQL.
    public var maxConnections = 20
    /// The longest a request waits for a pooled PostgreSQL connection before it is answered
    /// 503 (the server restarting or failing over must not hang every request).
    public var acquireTimeoutMs = 10_000

    enum CodingKeys: String, CodingKey {
        case url
        case maxConnections = "max_connections"
        case acquireTimeoutMs = "acquire_timeout_ms"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&url, .url)
        try c.override(&maxConnections, .maxConnections)
        try c.override(&acquireTimeoutMs, .acquireTimeoutMs)
    }
}

public struct AuthConfig: Codable, Sendable, Equatable {
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

    enum CodingKeys: String, CodingKey {
        case jwtSecret = "jwt_secret"
        case jwksFile = "jwks_file"
        case issuer
        case audience
        case roleClaim = "role_claim"
        case defaultRole = "default_role"
        case leewaySeconds = "leeway_seconds"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&jwtSecret, .jwtSecret)
        try c.override(&jwksFile, .jwksFile)
        try c.override(&issuer, .issuer)
        try c.override(&audience, .audience)
        try c.override(&roleClaim, .roleClaim)
        try c.override(&defaultRole, .defaultRole)
        try c.override(&leewaySeconds, .leewaySeconds)
    }
}

public struct LimitsConfig: Codable, Sendable, Equatable {
    /// Largest request body accepted, in bytes (413 beyond).
    public var maxBodyBytes = 1_048_576

    enum CodingKeys: String, CodingKey {
        case maxBodyBytes = "max_body_bytes"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&maxBodyBytes, .maxBodyBytes)
    }
}

/// A limit of `limit` requests per `windowSeconds`, enforced as a token bucket (bursts up to
/// `limit`, refilled evenly).
public struct RateLimitRule: Codable, Sendable, Equatable {
    public var limit: Int
    public var windowSeconds: Int
    /// On a per-route rule: what callers with a valid token get instead (seed 003's stops:
    /// 60 a minute per IP, 120 per user). Nil: the same as anonymous callers.
    public var authenticated: Allowance?

    /// A limit on its own (the authenticated part of a route rule).
    public struct Allowance: Codable, Sendable, Equatable {
        public var limit: Int
        public var windowSeconds: Int

        enum CodingKeys: String, CodingKey {
            case limit
            case windowSeconds = "window_seconds"
        }

        public init(limit: Int, windowSeconds: Int) {
            self.limit = limit
            self.windowSeconds = windowSeconds
        }
    }

    enum CodingKeys: String, CodingKey {
        case limit
        case windowSeconds = "window_seconds"
        case authenticated
    }

    public init(limit: Int, windowSeconds: Int, authenticated: Allowance? = nil) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.authenticated = authenticated
    }

    /// The limit and window that apply to a caller.
    public func applying(toAuthenticated isAuthenticated: Bool) -> RateLimitRule {
        guard isAuthenticated, let authenticated else { return RateLimitRule(limit: limit, windowSeconds: windowSeconds) }
        return RateLimitRule(limit: authenticated.limit, windowSeconds: authenticated.windowSeconds)
    }
}

public struct RateLimitConfig: Codable, Sendable, Equatable {
    public var enabled = true
    /// Calls without a token, per client IP.
    public var anonymous = RateLimitRule(limit: 60, windowSeconds: 60)
    /// Calls with a valid token, per user.
    public var authenticated = RateLimitRule(limit: 600, windowSeconds: 60)
    /// Per-route rules keyed by `"METHOD /api/v1/path/{param}"`; they replace the defaults
    /// for that route (per user when authenticated, per IP otherwise). Starts from the
    /// seed's rider limits (`builtInRoutes`); a configured rule replaces the built-in one of
    /// its route.
    public var routes: [String: RateLimitRule] = RateLimitConfig.builtInRoutes

    /// Seed 002's rider limits: 3 ride requests and 5 cancels a minute, 30 trip reads a
    /// minute; seed 003's stops and departures: 60 a minute anonymous, 120 authenticated.
    public static let builtInRoutes: [String: RateLimitRule] = [
        "POST /api/v1/ride-requests": RateLimitRule(limit: 3, windowSeconds: 60),
        "POST /api/v1/ride-requests/{id}/cancel": RateLimitRule(limit: 5, windowSeconds: 60),
        "GET /api/v1/trips/{id}": RateLimitRule(limit: 30, windowSeconds: 60),
        "GET /api/v1/stops/nearby": stopsRule,
        "GET /api/v1/stops/{id}": stopsRule,
        "GET /api/v1/stops/{id}/departures": stopsRule,
    ]

    static let stopsRule = RateLimitRule(limit: 60, windowSeconds: 60, authenticated: .init(limit: 120, windowSeconds: 60))

    enum CodingKeys: String, CodingKey {
        case enabled
        case anonymous
        case authenticated
        case routes
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&enabled, .enabled)
        try c.override(&anonymous, .anonymous)
        try c.override(&authenticated, .authenticated)
        routes = Self.builtInRoutes.merging(try c.decodeIfPresent([String: RateLimitRule].self, forKey: .routes) ?? [:]) { _, configured in configured }
    }
}

public struct AppVersionConfig: Codable, Sendable, Equatable {
    /// Minimum app version per platform, keyed by the lower-cased `X-Platform` value
    /// (`ios`, `android`, `web`).
    public var platforms: [String: PlatformMinimum] = [:]

    public struct PlatformMinimum: Codable, Sendable, Equatable {
        public var minimumVersion: String
        public var appStoreUrl: String?

        enum CodingKeys: String, CodingKey {
            case minimumVersion = "minimum_version"
            case appStoreUrl = "app_store_url"
        }

        public init(minimumVersion: String, appStoreUrl: String? = nil) {
            self.minimumVersion = minimumVersion
            self.appStoreUrl = appStoreUrl
        }
    }

    enum CodingKeys: String, CodingKey {
        case platforms
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&platforms, .platforms)
    }
}

public struct IdempotencyConfig: Codable, Sendable, Equatable {
    /// How long a stored response is replayed for a retry with the same key.
    public var ttlSeconds = 86_400
    /// How long a request waits for a concurrent request with the same key to finish before
    /// answering 409 `IDEMPOTENCY_REQUEST_IN_PROGRESS`.
    public var waitSeconds = 10
    /// A key whose first request has run this long without finishing (its node died) may be
    /// taken over by a retry.
    public var lockTimeoutSeconds = 60

    enum CodingKeys: String, CodingKey {
        case ttlSeconds = "ttl_seconds"
        case waitSeconds = "wait_seconds"
        case lockTimeoutSeconds = "lock_timeout_seconds"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&ttlSeconds, .ttlSeconds)
        try c.override(&waitSeconds, .waitSeconds)
        try c.override(&lockTimeoutSeconds, .lockTimeoutSeconds)
    }
}

public struct LoggingConfig: Codable, Sendable, Equatable {
    /// trace, debug, info, notice, warning, error, critical.
    public var level = "info"
    /// `text` (human-readable, one line per event) or `json` (one JSON object per line).
    public var format = "text"

    enum CodingKeys: String, CodingKey {
        case level
        case format
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&level, .level)
        try c.override(&format, .format)
    }
}

/// The realtime gateway: Socket.IO at `/socket.io/` and the native WebSocket protocol at
/// `/api/v1/realtime`.
public struct RealtimeConfig: Codable, Sendable, Equatable {
    public var pingIntervalMs = 25_000
    public var pingTimeoutMs = 20_000
    /// Largest message a client may send, in bytes.
    public var maxPayload = 1_000_000
    /// Largest message a WebSocket peer may send before it authenticated (a Socket.IO
    /// CONNECT with its token fits easily): anyone may open a Socket.IO WebSocket.
    public var unauthenticatedMaxPayload = 16_384
    /// A message begun (a partial frame, or fragments without the last) must be complete
    /// within this time, or the WebSocket is closed (1008): no connection holds a buffer idle.
    public var partialMessageTimeoutMs = 10_000
    /// Outbound bytes queued for one client before it is disconnected as a slow consumer.
    public var outboundLimitBytes = 1_048_576
    /// A Socket.IO client must CONNECT to a namespace within this time.
    public var connectTimeoutMs = 45_000
    /// How long after a disconnect a client may recover its session and missed events.
    public var recoveryWindowSeconds = 120
    /// Socket.IO namespaces besides "/".
    public var namespaces: [String] = []
    /// Refuse realtime connections without a valid token.
    public var requireAuth = true
    /// History kept for replay: events younger than this…
    public var historyRetentionSeconds = 600
    /// …and at most this many per room.
    public var historyMaxPerRoom = 1000
    /// Client messages per second on one connection (bursts of the same size).
    public var clientMessagesPerSecond = 10

    enum CodingKeys: String, CodingKey {
        case pingIntervalMs = "ping_interval_ms"
        case pingTimeoutMs = "ping_timeout_ms"
        case maxPayload = "max_payload"
        case unauthenticatedMaxPayload = "unauthenticated_max_payload"
        case partialMessageTimeoutMs = "partial_message_timeout_ms"
        case outboundLimitBytes = "outbound_limit_bytes"
        case connectTimeoutMs = "connect_timeout_ms"
        case recoveryWindowSeconds = "recovery_window_seconds"
        case namespaces
        case requireAuth = "require_auth"
        case historyRetentionSeconds = "history_retention_seconds"
        case historyMaxPerRoom = "history_max_per_room"
        case clientMessagesPerSecond = "client_messages_per_second"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&pingIntervalMs, .pingIntervalMs)
        try c.override(&pingTimeoutMs, .pingTimeoutMs)
        try c.override(&maxPayload, .maxPayload)
        try c.override(&unauthenticatedMaxPayload, .unauthenticatedMaxPayload)
        try c.override(&partialMessageTimeoutMs, .partialMessageTimeoutMs)
        try c.override(&outboundLimitBytes, .outboundLimitBytes)
        try c.override(&connectTimeoutMs, .connectTimeoutMs)
        try c.override(&recoveryWindowSeconds, .recoveryWindowSeconds)
        try c.override(&namespaces, .namespaces)
        try c.override(&requireAuth, .requireAuth)
        try c.override(&historyRetentionSeconds, .historyRetentionSeconds)
        try c.override(&historyMaxPerRoom, .historyMaxPerRoom)
        try c.override(&clientMessagesPerSecond, .clientMessagesPerSecond)
    }
}
