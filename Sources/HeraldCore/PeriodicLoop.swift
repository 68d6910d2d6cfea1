import Logging
import ServiceLifecycle

/// The loop behind Herald's periodic services: a round, a wait, again, until a graceful
/// shutdown or cancellation.
///
/// Why one helper: every such service must stop the same way (a shutdown ends the wait at
/// once, and cancels a round in flight so a database that stopped answering cannot hold the
/// process), and must outlive a failed round (logged, tried again next time). Written by hand
/// in each service, those rules drifted.
public enum PeriodicLoop {
    /// Whether the loop waits before its first round.
    public enum Start: Sendable {
        /// Run a round at once (schedulers: what became due while the node was down).
        case immediately
        /// Wait one interval first (janitors, sweeps).
        case afterInterval
    }

    /// Runs `round` every `interval` until shutdown; returns then, so the caller can do its
    /// last work (a final flush, telling clients) after it.
    ///
    /// - Parameters:
    ///   - wake: cuts a wait short when signalled (work became due sooner); without it the
    ///     wait is a plain sleep.
    ///   - cancellingRound: a shutdown cancels the round in flight (the default). Off for a
    ///     round that must finish what it started (a sweep that closes sessions).
    ///   - failure: the log message of a round that threw.
    public static func run(
        every interval: Duration, start: Start, wake: WakeSignal? = nil, cancellingRound: Bool = true, logger: Logger,
        failure: String, _ round: @escaping @Sendable () async throws -> Void
    ) async {
        await run(every: interval, start: start, wake: wake, cancellingRound: cancellingRound, logger: logger, failure: failure, carrying: ()) { _ in
            try await round()
        }
    }

    /// The same for a round that hands a value to the next (a watermark): each round gets
    /// what the last one returned (`initial` first; a round that threw leaves it as it was).
    /// Returns the last value, for the caller's final work.
    @discardableResult
    public static func run<State: Sendable>(
        every interval: Duration, start: Start, wake: WakeSignal? = nil, cancellingRound: Bool = true, logger: Logger,
        failure: String, carrying initial: State, _ round: @escaping @Sendable (State) async throws -> State
    ) async -> State {
        var state = initial
        var waitFirst = start == .afterInterval
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if waitFirst {
                if let wake {
                    await cancelWhenGracefulShutdown { await wake.wait(for: interval) }
                    if Task.isShuttingDownGracefully || Task.isCancelled { return state }
                } else {
                    do { try await cancelWhenGracefulShutdown { try await CancellableSleep.sleep(for: interval) } } catch { return state }
                }
            }
            waitFirst = true
            let current = state
            do {
                state = cancellingRound ? try await cancelWhenGracefulShutdown { try await round(current) } : try await round(current)
            } catch is CancellationError {
                return state
            } catch {
                if Task.isShuttingDownGracefully { return state }
                logger.warning("\(failure)", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        return state
    }

    /// The same for a round that cannot fail (a sweep over memory): nothing to log.
    public static func run(
        every interval: Duration, start: Start, wake: WakeSignal? = nil, cancellingRound: Bool = true,
        _ round: @escaping @Sendable () async -> Void
    ) async {
        await run(
            every: interval, start: start, wake: wake, cancellingRound: cancellingRound, logger: Logger(label: "herald.periodic"),
            failure: "round failed", round)
    }
}
