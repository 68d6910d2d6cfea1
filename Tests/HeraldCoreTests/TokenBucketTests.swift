import Foundation
import HeraldCore
import Testing

@Suite struct TokenBucketTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func allowsABurstUpToTheLimitThenRefuses() {
        var bucket = TokenBucket(limit: 3, window: 60, now: start)
        #expect(bucket.take(now: start) == .allowed(remaining: 2))
        #expect(bucket.take(now: start) == .allowed(remaining: 1))
        #expect(bucket.take(now: start) == .allowed(remaining: 0))
        // 3 per 60 s refills one token every 20 s.
        #expect(bucket.take(now: start) == .limited(retryAfter: 20))
    }

    @Test func refillsEvenlyOverTheWindow() {
        var bucket = TokenBucket(limit: 3, window: 60, now: start)
        for _ in 0..<3 { _ = bucket.take(now: start) }
        #expect(bucket.take(now: start.addingTimeInterval(19.5)) == .limited(retryAfter: 1))
        #expect(bucket.take(now: start.addingTimeInterval(20)) == .allowed(remaining: 0))
        #expect(bucket.take(now: start.addingTimeInterval(20)) == .limited(retryAfter: 20))
    }

    @Test func neverHoldsMoreThanItsCapacity() {
        var bucket = TokenBucket(limit: 2, window: 1, now: start)
        let later = start.addingTimeInterval(3600)
        #expect(bucket.isFull(now: later))
        #expect(bucket.take(now: later) == .allowed(remaining: 1))
        #expect(bucket.take(now: later) == .allowed(remaining: 0))
        #expect(bucket.take(now: later) == .limited(retryAfter: 1))
    }

    @Test func retryAfterIsAtLeastOneSecond() {
        var bucket = TokenBucket(limit: 1000, window: 1, now: start)
        for _ in 0..<1000 { _ = bucket.take(now: start) }
        #expect(bucket.take(now: start) == .limited(retryAfter: 1))
    }

    @Test func aClockGoingBackwardsDoesNotMintTokens() {
        var bucket = TokenBucket(limit: 1, window: 60, now: start)
        _ = bucket.take(now: start)
        #expect(bucket.take(now: start.addingTimeInterval(-30)) == .limited(retryAfter: 60))
    }
}
