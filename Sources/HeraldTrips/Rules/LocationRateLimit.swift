import HeraldCore

/// How often a driver may send locations (the rideshare design's): one a second on the
/// way to a pickup or in a trip, one per 30 s online without one, each after a burst of 5;
/// then a throttle answer with the wait.
///
/// Why one bucket whose refill rate follows the state: a driver who gets a trip is not
/// punished for samples sent just before, and one who finishes keeps what is left of the burst.
public struct LocationRateLimit: Sendable, Equatable {
    public var rules: LocationRulesConfig
    public private(set) var tokens: Double
    public private(set) var updatedAt: Int64?

    public init(rules: LocationRulesConfig) {
        self.rules = rules
        tokens = Double(rules.burst)
    }

    /// Samples per second in each state.
    public func rate(active: Bool) -> Double {
        active ? rules.activePerSecond : 1 / rules.idleIntervalSeconds
    }

    /// Takes one sample at `now` (epoch ms): nil when admitted, else milliseconds to wait.
    public mutating func take(now: Int64, active: Bool) -> Int64? {
        let rate = rate(active: active)
        if let updatedAt, now > updatedAt {
            tokens = min(Double(rules.burst), tokens + Double(now - updatedAt) / 1000 * rate)
        }
        if updatedAt.map({ now > $0 }) ?? true { updatedAt = now }
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return max(1, Int64(((1 - tokens) / rate * 1000).rounded(.up)))
    }

    /// "1/s", "1/30s": the limit in force, for the throttle message.
    public func describe(active: Bool) -> String {
        active
            ? (rules.activePerSecond >= 1 ? "\(formatted(rules.activePerSecond))/s" : "1/\(formatted(1 / rules.activePerSecond))s")
            : "1/\(formatted(rules.idleIntervalSeconds))s"
    }

    private func formatted(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
