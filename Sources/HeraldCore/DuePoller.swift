import Logging
import ServiceLifecycle

/// A long-lived loop that runs work whose time has come: offer rounds, expiries, deadlines,
/// payment calls owed.
///
/// Why poll the database rather than keep timers: each of these is a column (`next_round_at`,
/// `deadline_at`, `next_attempt_at`), so it survives restarts and any node can act on it; the
/// work's own conditional updates let exactly one node act on each item. The poll is short,
/// a `WakeSignal` cuts it shorter when something becomes due sooner, and the clock is
/// injected, so tests move time and watch things happen. A database that stops answering
/// does not hold up a shutdown: the round in flight is cancelled.
public struct DuePoller: Service {
    let name: String
    let interval: Duration
    let wake: WakeSignal
    let ready: @Sendable () async -> Bool
    let logger: Logger
    let work: @Sendable () async throws -> Void

    /// - Parameter work: one round; it should loop over batches until nothing is due.
    public init(
        _ name: String, interval: Duration, wake: WakeSignal, logger: Logger, ready: @escaping @Sendable () async -> Bool,
        work: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.wake = wake
        self.ready = ready
        self.logger = logger
        self.work = work
    }

    public func run() async throws {
        guard await ready() else { return }
        await PeriodicLoop.run(every: interval, start: .immediately, wake: wake, logger: logger, failure: "\(name) round failed", work)
    }
}
