/// How long to wait before the next reconnect: exponential with full jitter.
///
/// Why full jitter: after a server restart or a network change every client reconnects at
/// once; a random wait between zero and the exponential bound spreads them out (the
/// "full jitter" of AWS's backoff study), and the bound grows so a server that stays down is
/// not hammered. A connection that stayed up for `resetAfter` starts again from the base.
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration
    public var resetAfter: Duration

    public init(base: Duration = .milliseconds(500), cap: Duration = .seconds(30), resetAfter: Duration = .seconds(60)) {
        self.base = base
        self.cap = cap
        self.resetAfter = resetAfter
    }

    /// The bound for the `attempt`-th retry in a row (0 first): base × 2^attempt, at most `cap`.
    public func bound(attempt: Int) -> Duration {
        let doublings = min(max(attempt, 0), 30)
        let bound = base * (1 << doublings)
        return bound > cap ? cap : bound
    }

    /// The wait for the `attempt`-th retry: `random` (in 0...1) of the bound.
    public func delay(attempt: Int, random: Double) -> Duration {
        bound(attempt: attempt) * min(max(random, 0), 1)
    }

    public func delay(attempt: Int) -> Duration {
        delay(attempt: attempt, random: Double.random(in: 0...1))
    }
}
