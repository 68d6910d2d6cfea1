import Synchronization

/// The service windows a planner has met (`ServiceWindow`), the least recently used dropped
/// past `capacity`. Queries on the same day find theirs built; a window is built outside the
/// lock, so one that two queries ask for at once may be built twice and the second kept,
/// never wrong.
final class ServiceWindowCache: Sendable {
    private struct Entry {
        let window: ServiceWindow
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Int32: Entry] = [:]
        var uses: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    /// Four windows: a server answers for today and tomorrow, and a day changing under a
    /// query; each holds three days' stop times (3.5 MB on Halifax).
    init(capacity: Int = 4) {
        self.capacity = max(1, capacity)
    }

    /// The window around `day`, built with `build` when it is not held.
    func window(day: Int32, build: () -> ServiceWindow) -> ServiceWindow {
        let cached = state.withLock { state -> ServiceWindow? in
            state.uses += 1
            guard var entry = state.entries[day] else { return nil }
            entry.lastUse = state.uses
            state.entries[day] = entry
            return entry.window
        }
        if let cached { return cached }
        let built = build()
        state.withLock { state in
            state.uses += 1
            if state.entries[day] == nil, state.entries.count >= capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries[oldest] = nil
            }
            state.entries[day] = Entry(window: built, lastUse: state.uses)
        }
        return built
    }

    /// The days whose windows are held now (for tests).
    var days: [Int32] { state.withLock { $0.entries.keys.sorted() } }
}
