import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import HeraldTransit
import HeraldTrips

extension HeraldConfig {
    /// Problems that would make the server misbehave, named by their config path: the
    /// server's own sections here, each module's from its section.
    ///
    /// Why at start-up: a typo in a limit or a port should stop `herald serve` with a clear
    /// message, not surface as odd behaviour under load.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("")
        checks.check((0...65535).contains(server.port), "server.port", "must be between 0 and 65535")
        let apps = Set(push.resolvedApps.keys)
        for (type, names) in notifications.typeApps.sorted(by: { $0.key < $1.key }) {
            for name in names where !apps.contains(name) {
                checks.check(false, "notifications.type_apps.\(type)", "\(name) is not one of push.apps (\(apps.sorted().joined(separator: ", ")))")
            }
        }
        if let url = server.publicURL {
            let parts = URLComponents(string: url)
            checks.check(
                url.count <= 500 && (parts?.scheme == "https" || parts?.scheme == "http") && parts?.host?.isEmpty == false && parts?.query == nil
                    && parts?.fragment == nil && !url.hasSuffix("/"),
                "server.public_url", "must be an http(s) URL without a query or a trailing slash")
        }
        checks.check(!server.host.isEmpty, "server.host", "must not be empty")
        checks.check(
            server.requestHeadTimeoutMs >= 100 && server.requestHeadTimeoutMs <= 3_600_000, "server.request_head_timeout_ms", "must be between 100 and 3600000")
        checks.check(server.idleTimeoutMs >= 100 && server.idleTimeoutMs <= 3_600_000, "server.idle_timeout_ms", "must be between 100 and 3600000")
        checks.check(
            server.requestBodyTimeoutMs >= 100 && server.requestBodyTimeoutMs <= 3_600_000, "server.request_body_timeout_ms", "must be between 100 and 3600000")
        checks.check(
            server.requestBodyMinBytesPerSecond >= 1 && server.requestBodyMinBytesPerSecond <= 1 << 30, "server.request_body_min_bytes_per_second",
            "must be between 1 and 1073741824")
        if let cap = server.maxConnectionsPerClient {
            checks.check(cap >= 0 && cap <= 10_000_000, "server.max_connections_per_client", "must be between 0 (no cap) and 10000000")
        }
        if let limit = server.maxConnections {
            checks.check(limit >= 1 && limit <= 10_000_000, "server.max_connections", "must be between 1 and 10000000")
        }
        if let threads = server.threads {
            checks.check(threads >= 1 && threads <= 256, "server.threads", "must be between 1 and 256")
        }
        checks.add(cors.validationErrors())
        checks.add(tracing.validationErrors())
        checks.check(limits.maxBodyBytes >= 1024 && limits.maxBodyBytes <= 1 << 30, "limits.max_body_bytes", "must be between 1 KiB and 1 GiB")
        for (name, rule) in [("anonymous", rateLimits.anonymous), ("authenticated", rateLimits.authenticated), ("service", rateLimits.service)] {
            checks.check(rule.limit > 0 && rule.windowSeconds > 0, "rate_limits.\(name)", "limit and window_seconds must be positive")
        }
        for (route, rule) in rateLimits.routes.sorted(by: { $0.key < $1.key }) {
            checks.check(rule.limit > 0 && rule.windowSeconds > 0, "rate_limits.routes.\(route)", "limit and window_seconds must be positive")
            if let authenticated = rule.authenticated {
                checks.check(
                    authenticated.limit > 0 && authenticated.windowSeconds > 0, "rate_limits.routes.\(route).authenticated",
                    "limit and window_seconds must be positive")
            }
            let parts = route.split(separator: " ")
            checks.check(parts.count == 2 && parts[1].hasPrefix("/"), "rate_limits.routes.\(route)", "keys look like \"POST /api/v1/path\"")
        }
        for (platform, minimum) in appVersions.platforms.sorted(by: { $0.key < $1.key }) {
            checks.check(
                SemanticVersion(minimum.minimumVersion) != nil, "app_versions.platforms.\(platform).minimum_version", "must be a dotted version like 1.2.0")
        }
        checks.check(idempotency.ttlSeconds >= 60, "idempotency.ttl_seconds", "must be at least 60")
        checks.check(idempotency.waitSeconds >= 0 && idempotency.waitSeconds <= 120, "idempotency.wait_seconds", "must be between 0 and 120")
        checks.check(idempotency.lockTimeoutSeconds >= 1, "idempotency.lock_timeout_seconds", "must be positive")
        checks.add(database.validationErrors())
        checks.add(auth.validationErrors())
        checks.add(realtime.validationErrors())
        checks.add(notifications.validationErrors())
        checks.add(push.validationErrors())
        checks.add(dispatch.validationErrors())
        checks.add(payments.validationErrors())
        checks.add(trips.validationErrors())
        checks.add(transit.validationErrors())
        return checks.errors
    }
}
