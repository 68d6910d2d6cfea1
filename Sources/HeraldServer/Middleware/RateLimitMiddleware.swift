import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird

/// Applies the configured rate limits: per user for authenticated callers, per IP otherwise,
/// with per-route rules (`"POST /api/v1/ride-requests"`) replacing the defaults; a route rule
/// may give authenticated callers a limit of their own.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let gate: RateLimitGate

    static let limitHeader = HTTPField.Name("X-RateLimit-Limit")!
    static let remainingHeader = HTTPField.Name("X-RateLimit-Remaining")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let allowed = try gate.take("\(request.method.rawValue) \(context.endpointPath ?? request.uri.path)", context) else {
            return try await next(request, context)
        }
        var response = try await next(request, context)
        response.headers[Self.limitHeader] = String(allowed.limit)
        response.headers[Self.remainingHeader] = String(allowed.remaining)
        return response
    }
}

/// The rate-limit decision, shared by the middleware and by handlers whose limit depends on
/// the body (a trip cancelled through `/trips/{id}/transitions` spends the cancel route's
/// allowance, the rideshare design's 5 a minute).
struct RateLimitGate: Sendable {
    let config: RateLimitConfig
    let limiter: RateLimiter
    let clock: any HeraldClock

    /// Takes one call of `routeKey` (`"POST /api/v1/ride-requests/{id}/cancel"`) for the caller:
    /// the rule's limit and what remains, nil when limits are off, or a 429 `APIError`.
    func take(_ routeKey: String, _ context: HeraldRequestContext) throws -> (limit: Int, remaining: Int)? {
        guard config.enabled else { return nil }
        let caller: String
        let defaultRule: RateLimitRule
        let kind: String
        let isService = context.identity?.role == .service
        if let identity = context.identity {
            caller = "user:\(identity.userID)"
            (defaultRule, kind) = isService ? (config.service, "service") : (config.authenticated, "authenticated")
        } else {
            caller = "ip:\(context.clientIP)"
            (defaultRule, kind) = (config.anonymous, "anonymous")
        }
        let isAuthenticated = context.identity != nil
        // A backend is held to its own limit, not to the riders' per-route rules.
        let specific = isService ? config.routes[routeKey] : config.rule(forRoute: routeKey)
        let rule = specific?.applying(toAuthenticated: isAuthenticated) ?? defaultRule
        let key = RateLimiter.Key(rule: specific == nil ? kind : "\(routeKey) \(kind)", caller: caller)

        switch limiter.take(key, rule: rule, now: clock.now()) {
        case .allowed(let remaining):
            return (rule.limit, remaining)
        case .limited(let retryAfter):
            throw APIError(
                status: 429, code: .rateLimitExceeded,
                message: "Rate limit exceeded for this endpoint.",
                details: [
                    "limit": .number(Double(rule.limit)),
                    "window": .string(Self.describe(windowSeconds: rule.windowSeconds)),
                    "retry_after": .number(Double(retryAfter)),
                ],
                headers: ["Retry-After": String(retryAfter), "X-RateLimit-Limit": String(rule.limit), "X-RateLimit-Remaining": "0"]
            )
        }
    }

    /// "1 minute", "30 seconds", "2 hours": how the original apps show a window.
    static func describe(windowSeconds seconds: Int) -> String {
        func unit(_ value: Int, _ name: String) -> String { value == 1 ? "1 \(name)" : "\(value) \(name)s" }
        if seconds % 3600 == 0 { return unit(seconds / 3600, "hour") }
        if seconds % 60 == 0 { return unit(seconds / 60, "minute") }
        return unit(seconds, "second")
    }
}
