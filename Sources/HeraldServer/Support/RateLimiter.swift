import Foundation
import HeraldCore
import Synchronization

/// Token buckets per (rule, caller), in memory on each node.
///
/// Why in memory: a limit exists to protect this node from a burst; checking it must cost
/// nanoseconds, not a database round trip. Full buckets are forgotten in sweeps, so memory
/// follows the number of recently active callers, with a hard cap. At the cap the callers
/// seen longest ago are forgotten (a tenth at a time): a caller with many addresses can
/// only push out buckets nobody used since, never reset the limits of those calling now.
final class RateLimiter: Sendable {
    struct Key: Hashable, Sendable {
        let rule: String
        let caller: String
    }

    private struct Entry {
        var bucket: TokenBucket
        /// When the bucket was last taken from, in takes (a counter, not a clock).
        var touched: UInt64
    }

    private struct State {
        var buckets: [Key: Entry] = [:]
        var takes: UInt64 = 0
        var takesSinceSweep = 0
    }

    private let state = Mutex(State())
    private let maxBuckets: Int
    private let sweepEvery: Int

    init(maxBuckets: Int = 200_000, sweepEvery: Int = 10_000) {
        self.maxBuckets = max(10, maxBuckets)
        self.sweepEvery = sweepEvery
    }

    func take(_ key: Key, rule: RateLimitRule, now: Date) -> TokenBucket.Decision {
        state.withLock { state in
            state.takes += 1
            state.takesSinceSweep += 1
            if state.takesSinceSweep >= sweepEvery || (state.buckets.count >= maxBuckets && state.buckets[key] == nil) {
                state.takesSinceSweep = 0
                state.buckets = state.buckets.filter { !$0.value.bucket.isFull(now: now) }
                if state.buckets.count >= maxBuckets {
                    // Every bucket is in use: forget the tenth used longest ago, so the
                    // next sweep is a tenth of the cap away (not one per take).
                    let oldest = state.buckets.map(\.value.touched).sorted()[maxBuckets / 10]
                    state.buckets = state.buckets.filter { $0.value.touched > oldest }
                }
            }
            var bucket = state.buckets[key]?.bucket ?? TokenBucket(limit: rule.limit, window: TimeInterval(rule.windowSeconds), now: now)
            let decision = bucket.take(now: now)
            state.buckets[key] = Entry(bucket: bucket, touched: state.takes)
            return decision
        }
    }

    var bucketCount: Int { state.withLock { $0.buckets.count } }
}
