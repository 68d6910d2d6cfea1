import Foundation

/// A token bucket: `capacity` requests at once, refilled evenly over `window`.
///
/// Why a value type: the rate limiter holds one per (route, caller) and the rule itself is
/// checked in unit tests with explicit instants, no clock and no server.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    /// Tokens added per second.
    public let refillRate: Double
    public private(set) var tokens: Double
    public private(set) var updatedAt: Date

    public init(limit: Int, window: TimeInterval, now: Date) {
        precondition(limit > 0 && window > 0, "a rate limit needs a positive limit and window")
        capacity = Double(limit)
        refillRate = Double(limit) / window
        tokens = Double(limit)
        updatedAt = now
    }

    public enum Decision: Sendable, Equatable {
        case allowed(remaining: Int)
        /// Seconds until one token is back, rounded up to whole seconds (never 0).
        case limited(retryAfter: Int)
    }

    /// Takes one token if there is one.
    public mutating func take(now: Date) -> Decision {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return .allowed(remaining: Int(tokens.rounded(.down)))
        }
        let wait = (1 - tokens) / refillRate
        return .limited(retryAfter: max(1, Int(wait.rounded(.up))))
    }

    /// True when the bucket has refilled completely, so forgetting it changes nothing.
    public func isFull(now: Date) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity
    }

    private mutating func refill(now: Date) {
        let elapsed = now.timeIntervalSince(updatedAt)
        if elapsed > 0 {
            tokens = min(capacity, tokens + elapsed * refillRate)
            updatedAt = now
        }
    }
}
