import Synchronization

/// Wakes one waiting loop early: a worker that polls every few hundred milliseconds sleeps
/// on this instead, and whoever just wrote work for it signals, so the work starts at once.
///
/// Why a flag as well as a waiter: a signal that arrives while the loop is busy is kept and
/// ends its next wait immediately, so no signal is lost between two waits. Meant for one
/// waiting loop; several signals before a wait count as one.
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var abandoned = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns after a signal or after `timeout`, whichever comes first (or on cancellation);
    /// may return early once after a signal that raced a timeout, which costs one extra poll.
    public func wait(for timeout: Duration) async {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await CancellableSleep.sleep(for: timeout)
                return false
            }
            group.addTask {
                await self.next()
                return true
            }
            let signalled = await group.next() ?? false
            group.cancelAll()
            // Only a wait the timeout ended leaves a waiter behind to release. (Abandoning after
            // a signalled wait too set the flag every time, so every later wait returned at
            // once: the loop spun on a core and hammered the database.)
            if !signalled { abandon() }
        }
    }

    private func next() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.pending || state.abandoned {
                    state.pending = false
                    state.abandoned = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Releases a waiter the timeout beat (or makes the not-yet-registered one return at once).
    private func abandon() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.abandoned = true
            return nil
        }
        waiter?.resume()
    }
}
