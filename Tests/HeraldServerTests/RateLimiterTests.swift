import Foundation
import HeraldCore
import Testing

@testable import HeraldServer

/// The limiter's memory is capped; at the cap it forgets the callers seen longest ago, so
/// a caller with many addresses cannot reset the limits of those calling now.
@Suite struct RateLimiterTests {
    static let rule = RateLimitRule(limit: 5, windowSeconds: 3600)

    static func isLimited(_ decision: TokenBucket.Decision) -> Bool {
        if case .limited = decision { return true }
        return false
    }

    @Test func aFloodOfNewCallersDoesNotResetAnActiveCallersLimit() {
        let limiter = RateLimiter(maxBuckets: 100, sweepEvery: 1_000_000)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let victim = RateLimiter.Key(rule: "plan", caller: "ip:203.0.113.9")
        for _ in 0..<5 { #expect(!Self.isLimited(limiter.take(victim, rule: Self.rule, now: now))) }
        #expect(Self.isLimited(limiter.take(victim, rule: Self.rule, now: now)))
        // 1,000 addresses, each taking once (none of their buckets is full, so sweeping
        // them does not help), while the limited caller keeps trying.
        for index in 0..<1_000 {
            _ = limiter.take(RateLimiter.Key(rule: "plan", caller: "ip:10.0.\(index / 256).\(index % 256)"), rule: Self.rule, now: now)
            if index % 20 == 0 {
                #expect(Self.isLimited(limiter.take(victim, rule: Self.rule, now: now)), "reset after \(index) new callers")
            }
            #expect(limiter.bucketCount <= 100)
        }
        #expect(Self.isLimited(limiter.take(victim, rule: Self.rule, now: now)))
        #expect(limiter.bucketCount >= 80)
    }

    @Test func fullBucketsAreSweptFirst() {
        let limiter = RateLimiter(maxBuckets: 100, sweepEvery: 1_000_000)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<99 { _ = limiter.take(.init(rule: "r", caller: "old-\(index)"), rule: Self.rule, now: start) }
        // An hour later every old bucket is full again: the next new caller sweeps them all.
        let later = start.addingTimeInterval(3600)
        _ = limiter.take(.init(rule: "r", caller: "a"), rule: Self.rule, now: later)
        _ = limiter.take(.init(rule: "r", caller: "b"), rule: Self.rule, now: later)
        #expect(limiter.bucketCount == 2)
    }
}
