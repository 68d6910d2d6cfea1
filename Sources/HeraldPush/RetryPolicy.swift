/// When to try a failed push again, and when to stop.
///
/// Why jitter: after a provider outage every queued delivery fails at once; spreading their
/// retries over ±20 % keeps them from returning as one thundering herd.
public struct RetryPolicy: Sendable, Equatable {
    public var baseMilliseconds: Int64
    public var maxMilliseconds: Int64
    public var maxAttempts: Int
    public var maxAgeMilliseconds: Int64

    public init(baseMilliseconds: Int64, maxMilliseconds: Int64, maxAttempts: Int, maxAgeMilliseconds: Int64) {
        self.baseMilliseconds = baseMilliseconds
        self.maxMilliseconds = maxMilliseconds
        self.maxAttempts = maxAttempts
        self.maxAgeMilliseconds = maxAgeMilliseconds
    }

    /// The delay before attempt `attempts + 1`: base·2^(attempts−1), capped, times a factor in
    /// [0.8, 1.2); a provider's `Retry-After` is honoured as a lower bound.
    public func delay(afterAttempt attempts: Int, retryAfterMilliseconds: Int64?, jitter: Double) -> Int64 {
        let exponent = min(max(attempts - 1, 0), 30)
        let raw = min(baseMilliseconds.multipliedReportingOverflow(by: 1 << exponent).partialValue, maxMilliseconds)
        let jittered = Int64((Double(max(raw, 0)) * (0.8 + 0.4 * min(max(jitter, 0), 0.999_999))).rounded())
        return max(jittered, retryAfterMilliseconds ?? 0)
    }

    /// Whether another attempt is allowed at `retryAt` for a delivery created at `createdAt`.
    public func mayRetry(attempts: Int, createdAt: Int64, retryAt: Int64) -> Bool {
        attempts < maxAttempts && retryAt - createdAt <= maxAgeMilliseconds
    }
}
