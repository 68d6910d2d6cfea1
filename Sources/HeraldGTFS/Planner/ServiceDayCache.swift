import Synchronization

/// The service days a planner has met (`ServiceDayRuns`), the least recently used dropped
/// past `capacity`. Queries around the same days (yesterday's trips past midnight, today,
/// tomorrow) find theirs built; a day is built outside the lock, so a day two queries ask
/// for at once may be built twice and the second kept, never wrong.
final class ServiceDayCache: Sendable {
    private struct Entry {
        let runs: ServiceDayRuns
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Int32: Entry] = [:]
        var uses: UInt64 = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 8) {
        self.capacity = max(3, capacity)
    }

    func runs(day: Int32, build: () -> ServiceDayRuns) -> ServiceDayRuns {
        let cached = state.withLock { state -> ServiceDayRuns? in
            state.uses += 1
            guard var entry = state.entries[day] else { return nil }
            entry.lastUse = state.uses
            state.entries[day] = entry
            return entry.runs
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
            state.entries[day] = Entry(runs: built, lastUse: state.uses)
        }
        return built
    }

    /// The days held now (for tests).
    var days: [Int32] { state.withLock { $0.entries.keys.sorted() } }
}
