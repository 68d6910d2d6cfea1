import Foundation
import NIOPosix
import Synchronization

/// Journey searches on threads of their own, shared fairly between callers, with a bounded
/// queue that sheds load (`Busy`, answered 503 with `Retry-After`) before waiting explodes.
///
/// Why searches and not plans: a plan is a few to a few dozen RAPTOR searches (a departure
/// window is one per departure found). Scheduling each search on its own lets a rider's
/// short plan pass between the searches of a long one, instead of waiting for all of it.
/// Why by recent use: the next free thread takes the waiting search of the caller who has
/// used the planner least lately (seconds of search, halving every `halfLife`), so sixteen
/// callers planning as fast as their rate limit allows do not starve a seventeenth.
/// Why threads of its own: feed loads and imports keep `BlockingWork`'s thread for
/// seconds; planning queued behind them was the attack's 14-second plan.
public final class PlannerPool: Sendable {
    /// The planner is saturated: try again shortly.
    public struct Busy: Error, Sendable, Equatable {}

    struct Waiter {
        let client: String
        let since: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct Usage {
        var seconds: Double
        var at: ContinuousClock.Instant
    }

    struct State {
        var running = 0
        var waiting: [Waiter] = []
        var usage: [String: Usage] = [:]
    }

    let threads: Int
    let queueLimit: Int
    let maxWait: Duration
    static let halfLife: Duration = .seconds(60)
    private let pool: NIOThreadPool
    private let state = Mutex(State())

    public init(threads: Int, queueLimit: Int, maxWait: Duration) {
        self.threads = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.maxWait = maxWait
        pool = NIOThreadPool(numberOfThreads: self.threads)
        pool.start()
    }

    /// Runs one search for `client` (a user, or an address); throws `Busy` when the queue is
    /// full or the search waited longer than `maxWait`.
    public func run<T: Sendable>(client: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await admit(client)
        let started = ContinuousClock.now
        do {
            let result = try await pool.runIfActive(work)
            finish(client, elapsed: ContinuousClock.now - started)
            return result
        } catch {
            finish(client, elapsed: ContinuousClock.now - started)
            throw error
        }
    }

    /// Searches waiting for a thread now.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    private func admit(_ client: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let decision: Bool? = state.withLock { state in
                if state.running < threads && state.waiting.isEmpty {
                    state.running += 1
                    return true
                }
                guard state.waiting.count < queueLimit else { return false }
                state.waiting.append(Waiter(client: client, since: .now, continuation: continuation))
                return nil
            }
            switch decision {
            case true?: continuation.resume()
            case false?: continuation.resume(throwing: Busy())
            case nil: break
            }
        }
    }

    /// Charges the search to its caller and hands the thread to the waiting search whose
    /// caller used the planner least lately; waiters past `maxWait` are shed.
    private func finish(_ client: String, elapsed: Duration) {
        let now = ContinuousClock.now
        var start: [CheckedContinuation<Void, any Error>] = []
        var shed: [CheckedContinuation<Void, any Error>] = []
        state.withLock { state in
            state.running -= 1
            state.usage[client] = Usage(seconds: Self.decayed(state.usage[client], at: now) + Self.seconds(elapsed), at: now)
            state.waiting.removeAll { waiter in
                guard now - waiter.since > maxWait else { return false }
                shed.append(waiter.continuation)
                return true
            }
            while state.running < threads, !state.waiting.isEmpty {
                var best = 0
                var bestUsage = Double.infinity
                for (index, waiter) in state.waiting.enumerated() {
                    let usage = Self.decayed(state.usage[waiter.client], at: now)
                    if usage < bestUsage {
                        best = index
                        bestUsage = usage
                    }
                }
                start.append(state.waiting.remove(at: best).continuation)
                state.running += 1
            }
            // Forget callers whose use has faded (a bounded table under many addresses).
            if state.usage.count > 10_000 { state.usage = state.usage.filter { Self.decayed($0.value, at: now) > 0.001 } }
        }
        for continuation in shed { continuation.resume(throwing: Busy()) }
        for continuation in start { continuation.resume() }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func decayed(_ usage: Usage?, at now: ContinuousClock.Instant) -> Double {
        guard let usage else { return 0 }
        return usage.seconds * exp2(-seconds(now - usage.at) / seconds(halfLife))
    }
}
