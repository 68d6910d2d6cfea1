import HeraldCore
import Testing

@testable import HeraldTrips

@Suite struct LocationRateLimitTests {
    /// 2027-01-15 08:00:00 UTC in epoch milliseconds.
    static let t0: Int64 = 1_800_000_000_000

    /// Defaults: burst 5, 1 per second while active, 1 per 30 s while idle.
    static func limiter() -> LocationRateLimit {
        LocationRateLimit(rules: LocationRulesConfig())
    }

    @Test func defaultRules() {
        let rules = LocationRulesConfig()
        #expect(rules.burst == 5)
        #expect(rules.activePerSecond == 1)
        #expect(rules.idleIntervalSeconds == 30)
        let limit = Self.limiter()
        #expect(limit.tokens == 5)
        #expect(limit.updatedAt == nil)
        #expect(limit.rate(active: true) == 1)
        #expect(abs(limit.rate(active: false) - 1.0 / 30) < 1e-12)
    }

    @Test func burstThenOnePerSecondWhileActive() {
        var limit = Self.limiter()
        for i in 0..<5 {
            #expect(limit.take(now: Self.t0, active: true) == nil, "sample \(i) of the burst")
        }
        let wait = limit.take(now: Self.t0, active: true)
        #expect(wait == 1_000)
        // A refused sample costs nothing: asking again at once gives the same wait.
        #expect(limit.take(now: Self.t0, active: true) == 1_000)
        // Half a second later, half the wait remains.
        #expect(limit.take(now: Self.t0 + 500, active: true) == 500)
        // A second after the burst one more passes, and only one.
        #expect(limit.take(now: Self.t0 + 1_000, active: true) == nil)
        #expect(limit.take(now: Self.t0 + 1_000, active: true) == 1_000)
    }

    @Test func steadyOnePerSecondIsAlwaysAdmitted() {
        var limit = Self.limiter()
        for i in 0..<120 {
            #expect(limit.take(now: Self.t0 + Int64(i) * 1_000, active: true) == nil, "sample at \(i) s")
        }
    }

    @Test func idleWaitsThirtySecondsAfterTheBurst() throws {
        var limit = Self.limiter()
        for _ in 0..<5 {
            #expect(limit.take(now: Self.t0, active: false) == nil)
        }
        let refused = limit.take(now: Self.t0, active: false)
        let wait = try #require(refused)
        #expect(wait >= 29_999 && wait <= 30_001, "got \(wait)")
        // 10 s later, about 20 s remain.
        let refusedLater = limit.take(now: Self.t0 + 10_000, active: false)
        let later = try #require(refusedLater)
        #expect(later >= 19_999 && later <= 20_001, "got \(later)")
        // 30 s after the burst one passes.
        #expect(limit.take(now: Self.t0 + 30_000, active: false) == nil)
        #expect(limit.take(now: Self.t0 + 30_000, active: false) != nil)
    }

    @Test func idleRefusesOnceASecond() {
        var limit = Self.limiter()
        for i in 0..<5 {
            #expect(limit.take(now: Self.t0 + Int64(i) * 1_000, active: false) == nil)
        }
        // Five seconds at 1/30 s refilled only 1/6 of a token.
        #expect(limit.take(now: Self.t0 + 5_000, active: false) != nil)
    }

    @Test func switchingActiveToIdleKeepsRemainingTokens() throws {
        var limit = Self.limiter()
        for _ in 0..<3 {
            #expect(limit.take(now: Self.t0, active: true) == nil)
        }
        #expect(limit.tokens == 2)
        // The trip ends: the two left over still pass at the idle rate…
        #expect(limit.take(now: Self.t0, active: false) == nil)
        #expect(limit.take(now: Self.t0, active: false) == nil)
        // …and then the idle wait applies.
        let refused = limit.take(now: Self.t0, active: false)
        let wait = try #require(refused)
        #expect(wait >= 29_999 && wait <= 30_001, "got \(wait)")
    }

    @Test func switchingIdleToActiveRefillsAtTheActiveRate() {
        var limit = Self.limiter()
        for _ in 0..<5 {
            #expect(limit.take(now: Self.t0, active: false) == nil)
        }
        #expect(limit.take(now: Self.t0, active: false) != nil)
        // A trip is accepted: half a second at 1/s leaves 500 ms to wait, not 15 s.
        #expect(limit.take(now: Self.t0 + 500, active: true) == 500)
        #expect(limit.take(now: Self.t0 + 1_000, active: true) == nil)
    }

    @Test func refillIsCappedAtTheBurst() {
        var limit = Self.limiter()
        for _ in 0..<5 { _ = limit.take(now: Self.t0, active: true) }
        // An hour later the bucket holds the burst, not 3600 tokens.
        let later = Self.t0 + 3_600_000
        for i in 0..<5 {
            #expect(limit.take(now: later, active: true) == nil, "sample \(i)")
        }
        #expect(limit.take(now: later, active: true) == 1_000)
    }

    @Test func aClockGoingBackDoesNotRefill() {
        var limit = Self.limiter()
        for _ in 0..<5 { _ = limit.take(now: Self.t0, active: true) }
        #expect(limit.take(now: Self.t0 - 10_000, active: true) == 1_000)
        #expect(limit.updatedAt == Self.t0)
        #expect(limit.take(now: Self.t0 + 1_000, active: true) == nil)
    }

    @Test func waitIsAtLeastOneMillisecond() {
        var rules = LocationRulesConfig()
        rules.activePerSecond = 1_000
        rules.burst = 1
        var limit = LocationRateLimit(rules: rules)
        #expect(limit.take(now: Self.t0, active: true) == nil)
        #expect(limit.take(now: Self.t0, active: true) == 1)
    }

    @Test func customBurst() {
        var rules = LocationRulesConfig()
        rules.burst = 2
        var limit = LocationRateLimit(rules: rules)
        #expect(limit.take(now: Self.t0, active: true) == nil)
        #expect(limit.take(now: Self.t0, active: true) == nil)
        #expect(limit.take(now: Self.t0, active: true) == 1_000)
    }

    @Test func describeTheLimitInForce() {
        let limit = Self.limiter()
        #expect(limit.describe(active: true) == "1/s")
        #expect(limit.describe(active: false) == "1/30s")
    }

    @Test func describeOtherRates() {
        var rules = LocationRulesConfig()
        rules.activePerSecond = 2
        rules.idleIntervalSeconds = 12.5
        #expect(LocationRateLimit(rules: rules).describe(active: true) == "2/s")
        #expect(LocationRateLimit(rules: rules).describe(active: false) == "1/12.5s")
        rules.activePerSecond = 0.5
        #expect(LocationRateLimit(rules: rules).describe(active: true) == "1/2s")
    }
}
