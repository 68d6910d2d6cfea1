import Synchronization

/// Runs a connection's inbound work one item at a time, in arrival order, without a task
/// parked per connection: a task exists only while there is work.
///
/// Why: a transport reads on its event loop and must not wait there, but what a message
/// triggers (a CONNECT's token check, a subscribe's replay) is async. Items are handled
/// strictly in order; when more than `limit` wait, `backlog(true)` is called so the
/// transport stops reading, and `backlog(false)` once half have been handled.
final class SerialMailbox<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var head = 0
        var running = false
        var paused = false

        var count: Int { items.count - head }

        mutating func pop() -> Item? {
            guard head < items.count else {
                items.removeAll(keepingCapacity: false)
                head = 0
                return nil
            }
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: false)
                head = 0
            }
            return item
        }
    }

    private let state = Mutex(State())
    private let limit: Int
    private let backlog: @Sendable (Bool) -> Void

    init(limit: Int, backlog: @escaping @Sendable (Bool) -> Void) {
        self.limit = limit
        self.backlog = backlog
    }

    /// Queues `item`; `process` handles it (and whatever is queued after it) in a task that
    /// ends when nothing is left.
    func post(_ item: Item, process: @escaping @Sendable (Item) async -> Void) {
        let (start, pause) = state.withLock { state -> (Bool, Bool) in
            state.items.append(item)
            var pause = false
            if state.count > limit && !state.paused {
                state.paused = true
                pause = true
            }
            if state.running { return (false, pause) }
            state.running = true
            return (true, pause)
        }
        if pause { backlog(true) }
        guard start else { return }
        // Not detached work: it ends when the queue is empty, and a connection's queue holds
        // at most `limit` items before its transport stops reading.
        Task { await self.drain(process) }
    }

    private func drain(_ process: @Sendable (Item) async -> Void) async {
        while true {
            let (next, resume) = state.withLock { state -> (Item?, Bool) in
                guard let item = state.pop() else {
                    state.running = false
                    return (nil, false)
                }
                if state.paused && state.count <= limit / 2 {
                    state.paused = false
                    return (item, true)
                }
                return (item, false)
            }
            if resume { backlog(false) }
            guard let next else { return }
            await process(next)
        }
    }
}
