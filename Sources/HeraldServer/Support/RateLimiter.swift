import Foundation
import HeraldCore
import Synchronization

/// Token buckets per (rule, caller), in memory on each node.
///
/// Why in memory: a limit exists to protect this node from a burst; checking it must cost
/// nanoseconds, not a database round trip. Full buckets are forgotten in sweeps, so memory
/// follows the number of recently active callers, with a hard cap.
final class RateLimiter: Sendable {
    struct Key: Hashable, Sendable {
        let rule: String
        let caller: String
    }

    private struct State {
        var buckets: [Key: TokenBucket] = [:]
        var takesSinceSweep = 0
    }

    private let state = Mutex(State())
    private let maxBuckets: Int
    private let sweepEvery: Int

    init(maxBuckets: Int = 200_000, sweepEvery: Int = 10_000) {
        self.maxBuckets = maxBuckets
        self.sweepEvery = sweepEvery
    }

    func take(_ key: Key, rule: RateLimitRule, now: Date) -> TokenBucket.Decision {
        state.withLock { state in
            state.takesSinceSweep += 1
            if state.takesSinceSweep >= sweepEvery || state.buckets.count >= maxBuckets {
                state.takesSinceSweep = 0
                state.buckets = state.buckets.filter { !$0.value.isFull(now: now) }
                if state.buckets.count >= maxBuckets {
                    // Every bucket is in use: forgetting some lets those callers burst once
                    // more, which beats unbounded memory.
                    state.buckets.removeAll(keepingCapacity: true)
                }
            }
            var bucket = state.buckets[key] ?? TokenBucket(limit: rule.limit, window: TimeInterval(rule.windowSeconds), now: now)
            let decision = bucket.take(now: now)
            state.buckets[key] = bucket
            return decision
        }
    }

    var bucketCount: Int { state.withLock { $0.buckets.count } }
}
