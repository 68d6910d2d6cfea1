import HeraldCore

public struct DatabaseConfig: ConfigSection, Sendable, Equatable {
    /// `sqlite:PATH` or `postgres://user:pass@host:port/db`; nil means
    /// `sqlite:<data_dir>/herald.sqlite`.
    public var url: String?
    /// Connection pool size on PostgreSQL.
    public var maxConnections = 20
    /// Connections apart from the pool for work no request waits on (the push delivery
    /// worker), so a queue of requests cannot stall it; 0: it shares the pool.
    public var backgroundConnections = 4
    /// The longest a request waits for a pooled PostgreSQL connection before it is answered
    /// 503 (the server restarting or failing over must not hang every request).
    public var acquireTimeoutMs = 10_000

    public init() {}

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("database")
        checks.check(maxConnections >= 1 && maxConnections <= 1000, "max_connections", "must be between 1 and 1000")
        checks.check(backgroundConnections >= 0 && backgroundConnections <= 100, "background_connections", "must be between 0 and 100")
        checks.check(acquireTimeoutMs >= 50 && acquireTimeoutMs <= 600_000, "acquire_timeout_ms", "must be between 50 and 600000")
        return checks.errors
    }
}
