import NIOCore
import NIOPosix
import Synchronization

/// A sleep on an event loop's timer that cancellation ends at once, timer included.
///
/// Why: `withDeadline` races every bounded operation against a sleep that is almost always
/// cancelled. `Task.sleep` keeps its timer queued until the original deadline after being
/// cancelled, so memory grew with calls per second × timeout; NIO's scheduled task leaves
/// the loop's timer heap when cancelled.
///
/// And why every sleep in Herald (and its tests) goes through here: on Linux with Swift 6.3.1,
/// `Task.sleep` on the continuous clock (libdispatch's CLOCK_BOOTTIME timer) was seen to lose
/// wakeups under load: a 200 µs sleep that never returned, then a process whose every
/// continuous-clock sleep stalled, its timerfd expired but never read. Event-loop timers kept
/// firing throughout, so periodic services built on them cannot stop silently.
public enum CancellableSleep {
    /// Returns after `duration`, or throws `CancellationError` as soon as the task is cancelled.
    public static func sleep(for duration: Duration, on loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()) async throws {
        let state = SleepState()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let nanoseconds = duration.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
                let amount: TimeAmount =
                    nanoseconds.overflow ? .hours(24 * 365) : .nanoseconds(nanoseconds.partialValue + duration.components.attoseconds / 1_000_000_000)
                let scheduled = loop.scheduleTask(in: amount) { state.fire() }
                state.start(continuation, scheduled)
            }
        } onCancel: {
            state.cancel()
        }
    }
}

/// The hand-off between the timer, the waiting task and its cancellation, whichever comes first.
private final class SleepState: Sendable {
    private enum Phase {
        case idle
        case waiting(CheckedContinuation<Void, any Error>, Scheduled<Void>)
        case fired
        case cancelled
        case done
    }

    private let phase = Mutex<Phase>(.idle)

    func start(_ continuation: CheckedContinuation<Void, any Error>, _ scheduled: Scheduled<Void>) {
        let early: Result<Void, any Error>? = phase.withLock { phase in
            switch phase {
            case .idle:
                phase = .waiting(continuation, scheduled)
                return nil
            case .fired:
                phase = .done
                return .success(())
            case .cancelled:
                phase = .done
                return .failure(CancellationError())
            case .waiting, .done:
                return nil
            }
        }
        guard let early else { return }
        if case .failure = early { scheduled.cancel() }
        continuation.resume(with: early)
    }

    func fire() {
        let continuation: CheckedContinuation<Void, any Error>? = phase.withLock { phase in
            switch phase {
            case .idle:
                phase = .fired
                return nil
            case .waiting(let continuation, _):
                phase = .done
                return continuation
            case .fired, .cancelled, .done:
                return nil
            }
        }
        continuation?.resume()
    }

    func cancel() {
        let waiting: (CheckedContinuation<Void, any Error>, Scheduled<Void>)? = phase.withLock { phase in
            switch phase {
            case .idle:
                phase = .cancelled
                return nil
            case .waiting(let continuation, let scheduled):
                phase = .done
                return (continuation, scheduled)
            case .fired, .cancelled, .done:
                return nil
            }
        }
        guard let (continuation, scheduled) = waiting else { return }
        scheduled.cancel()
        continuation.resume(throwing: CancellationError())
    }
}
