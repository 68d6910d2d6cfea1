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
public struct HeraldConfig: ConfigSection, Sendable, Equatable {
    public var server = ServerConfig()
    public var cors = CORSConfig()
    public var database = DatabaseConfig()
    /// Where the embedded database, the development JWT secret and other local state live.
    public var dataDir = "./herald-data"
    public var auth = AuthConfig()
    public var limits = LimitsConfig()
    public var rateLimits = RateLimitConfig()
    public var appVersions = AppVersionConfig()
    public var idempotency = IdempotencyConfig()
    public var logging = LoggingConfig()
    public var tracing = TracingConfig()
    public var realtime = RealtimeConfig()
    public var notifications = NotificationsConfig()
    public var push = PushConfig()
    public var dispatch = DispatchConfig()
    public var payments = PaymentsConfig()
    public var trips = TripsConfig()
    public var transit = TransitConfig()

    public init() {}
}

public struct ServerConfig: ConfigSection, Sendable, Equatable {
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
    /// After a response, a kept-alive connection must bring its next request head within
    /// this time or is closed (nginx's `keepalive_timeout` is 75 s).
    public var idleTimeoutMs = 75_000
    /// A request body must arrive within this time plus one second per
    /// `request_body_min_bytes_per_second` bytes it has sent: an upload at a decent rate is
    /// never cut, a trickle always is.
    public var requestBodyTimeoutMs = 30_000
    public var requestBodyMinBytesPerSecond = 1_000
    /// Open connections one client (an IPv4 address, an IPv6 /64) may hold at once; nil: a
    /// quarter of the node's connection limit, and none when `trust_forwarded_for` says a
    /// proxy stands in front (every client then has the proxy's address: cap at the proxy);
    /// 0: no cap.
    public var maxConnectionsPerClient: Int?
    /// Where clients reach this server (`https://api.example.com`, a path prefix allowed):
    /// links handed to apps, such as `/gtfs/version`'s `download_url`, are made absolute with
    /// it. Nil: such links are paths (an app resolves them against the URL it called).
    public var publicURL: String?

    public init() {}
}

public struct LimitsConfig: ConfigSection, Sendable, Equatable {
    /// Largest request body accepted, in bytes (413 beyond).
    public var maxBodyBytes = 1_048_576

    public init() {}
}

/// A limit of `limit` requests per `windowSeconds`, enforced as a token bucket (bursts up to
/// `limit`, refilled evenly).
public struct RateLimitRule: Codable, Sendable, Equatable {
    public var limit: Int
    public var windowSeconds: Int
    /// On a per-route rule: what callers with a valid token get instead (the transit API's stops:
    /// 60 a minute per IP, 120 per user). Nil: the same as anonymous callers.
    public var authenticated: Allowance?

    /// A limit on its own (the authenticated part of a route rule).
    public struct Allowance: Codable, Sendable, Equatable {
        public var limit: Int
        public var windowSeconds: Int

        public init(limit: Int, windowSeconds: Int) {
            self.limit = limit
            self.windowSeconds = windowSeconds
        }
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

public struct RateLimitConfig: ConfigSection, Sendable, Equatable {
    public var enabled = true
    /// Calls without a token, per client IP.
    public var anonymous = RateLimitRule(limit: 60, windowSeconds: 60)
    /// Calls with a valid token, per user.
    public var authenticated = RateLimitRule(limit: 600, windowSeconds: 60)
    /// Calls with a service token (a backend), per service identity: sized for a backend
    /// that sends a notification server its traffic (1,000 a second), not for a person.
    /// The built-in per-route rules (the original designs' rider limits) do not apply to it; routes
    /// configured in `routes` do.
    public var service = RateLimitRule(limit: 60_000, windowSeconds: 60)
    /// Per-route rules keyed by `"METHOD /api/v1/path/{param}"`; they replace the defaults
    /// for that route (per user when authenticated, per IP otherwise), and the built-in rule
    /// of their route (`builtInRoutes`, the original designs' rider limits).
    public var routes: [String: RateLimitRule] = [:]

    /// The rideshare design's rider limits: 3 ride requests and 5 cancels a minute, 30 trip
    /// reads a minute; the transit API's stops and departures: 60 a minute anonymous, 120
    /// authenticated; its trip planning: 10 and 30.
    public static let builtInRoutes: [String: RateLimitRule] = [
        "POST /api/v1/ride-requests": RateLimitRule(limit: 3, windowSeconds: 60),
        "POST /api/v1/ride-requests/{id}/cancel": RateLimitRule(limit: 5, windowSeconds: 60),
        "GET /api/v1/trips/{id}": RateLimitRule(limit: 30, windowSeconds: 60),
        "GET /api/v1/stops/nearby": stopsRule,
        "GET /api/v1/stops/{id}": stopsRule,
        "GET /api/v1/stops/{id}/departures": stopsRule,
        "POST /api/v1/trips/plan": RateLimitRule(limit: 10, windowSeconds: 60, authenticated: .init(limit: 30, windowSeconds: 60)),
    ]

    static let stopsRule = RateLimitRule(limit: 60, windowSeconds: 60, authenticated: .init(limit: 120, windowSeconds: 60))

    public init() {}

    /// The rule of a route (`"POST /api/v1/ride-requests"`): the configured one, else the
    /// built-in one; nil where only the defaults apply.
    public func rule(forRoute route: String) -> RateLimitRule? {
        routes[route] ?? Self.builtInRoutes[route]
    }
}

public struct AppVersionConfig: ConfigSection, Sendable, Equatable {
    /// Minimum app version per platform, keyed by the lower-cased `X-Platform` value
    /// (`ios`, `android`, `web`).
    public var platforms: [String: PlatformMinimum] = [:]

    public struct PlatformMinimum: Codable, Sendable, Equatable {
        public var minimumVersion: String
        public var appStoreUrl: String?

        public init(minimumVersion: String, appStoreUrl: String? = nil) {
            self.minimumVersion = minimumVersion
            self.appStoreUrl = appStoreUrl
        }
    }

    public init() {}
}

public struct IdempotencyConfig: ConfigSection, Sendable, Equatable {
    /// How long a stored response is replayed for a retry with the same key.
    public var ttlSeconds = 86_400
    /// How long a request waits for a concurrent request with the same key to finish before
    /// answering 409 `IDEMPOTENCY_REQUEST_IN_PROGRESS`.
    public var waitSeconds = 10
    /// A key whose first request has run this long without finishing (its node died) may be
    /// taken over by a retry.
    public var lockTimeoutSeconds = 60

    public init() {}
}

public struct LoggingConfig: ConfigSection, Sendable, Equatable {
    /// trace, debug, info, notice, warning, error, critical.
    public var level = LogLevel.info
    /// `text` (human-readable, one line per event) or `json` (one JSON object per line).
    public var format = LogFormat.text

    public init() {}
}

/// swift-log's levels, as a file names them.
public enum LogLevel: String, ConfigChoice, Equatable {
    case trace, debug, info, notice, warning, error, critical
}

public enum LogFormat: String, ConfigChoice, Equatable {
    case text, json
}
