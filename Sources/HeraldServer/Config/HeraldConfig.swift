import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import HeraldTransit
import HeraldTrips

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
