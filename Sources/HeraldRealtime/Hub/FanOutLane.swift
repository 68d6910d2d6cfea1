import NIOCore
import Synchronization

/// Fans a node's events out to its local members one at a time, in the order they were
/// handed over, on a task of its own.
///
/// Why: the fan-out to a room of 10,000 sockets takes milliseconds of CPU. Done on the
/// publisher's path, it held every other publish behind it (the bus orders publishes) and
/// made each publisher wait for it; here the publisher is answered once its event has its
/// place in the order. The lane is bounded: a poster waits while more than `limit` events
/// are ahead of the fan-out, so a node that cannot keep up slows its publishers down
/// instead of growing without bound. A task exists only while there is work.
final class FanOutLane: Sendable {
    private struct State {
        var events = CircularBuffer<RealtimeEvent>(initialCapacity: 16)
        var running = false
        var spaceWaiters: [CheckedContinuation<Void, Never>] = []
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// Events waiting beyond which posters wait.
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `event`'s place in the order at once, then waits while the lane is over its
    /// limit. `fanOut` delivers it (every post passes the same one).
    func post(_ event: RealtimeEvent, fanOut: @escaping @Sendable (RealtimeEvent) async -> Void) async {
        let (start, full) = state.withLock { state -> (Bool, Bool) in
            state.events.append(event)
            let full = state.events.count > limit
            if state.running { return (false, full) }
            state.running = true
            return (true, full)
        }
        if start {
            // Not detached work: it ends as soon as the lane is empty.
            Task { await self.drain(fanOut) }
        }
        guard full else { return }
        await withCheckedContinuation { continuation in
            let room = state.withLock { state -> Bool in
                if state.events.count <= limit { return true }
                state.spaceWaiters.append(continuation)
                return false
            }
            if room { continuation.resume() }
        }
    }

    /// Events waiting for their fan-out (the one being fanned out not included).
    var pending: Int { state.withLock { $0.events.count } }

    /// Returns once every event posted so far has been fanned out (and the lane is empty).
    func idle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                if !state.running { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func drain(_ fanOut: (RealtimeEvent) async -> Void) async {
        while true {
            let (next, wake): (RealtimeEvent?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
                guard let next = state.events.popFirst() else {
                    state.running = false
                    let waiting = state.idleWaiters + state.spaceWaiters
                    state.idleWaiters = []
                    state.spaceWaiters = []
                    return (nil, waiting)
                }
                guard state.events.count <= limit, !state.spaceWaiters.isEmpty else { return (next, []) }
                defer { state.spaceWaiters = [] }
                return (next, state.spaceWaiters)
            }
            for waiter in wake { waiter.resume() }
            guard let next else { return }
            await fanOut(next)
        }
    }
}
