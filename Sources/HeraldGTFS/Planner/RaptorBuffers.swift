import Synchronization

/// A search's per-stop, per-round × stop and per-lane memory, kept between queries: a query
/// on a city's feed touches a few thousand of its (rounds + 1) × stops cells, so writing every
/// cell afresh cost more than the search. The round's bit sets say which cells were written,
/// and `reset(rounds:)` puts only those back.
///
/// Why bit sets rather than lists of marked stops: marking is one `or`, with no check of a
/// flag first, and a round walks its stops in stop order, so the per-stop lists it reads next
/// (lanes, footpaths; stops are numbered along the map, `TransitNetwork.searchStop`) come in
/// address order.
///
/// Why raw memory and `let` pointers: the scan writes these cells in its inner loop; an
/// array there pays a uniqueness check per write, and a class's `var` an exclusivity check
/// per access.
///
/// Why `@unchecked Sendable` is safe: one search at a time uses a set. `RaptorBufferPool.take`
/// removes it from the pool under the pool's lock (or makes a new one) and hands it to one
/// search, which is its only holder until `give` puts it back under the lock; nothing else
/// keeps a reference to a set that is out of the pool.
final class RaptorBuffers: @unchecked Sendable {
    let stopCount: Int
    let laneCount: Int
    /// Cells: (rounds + 1) × stops.
    let cellCount: Int
    /// Per stop: the earliest arrival, and the earliest by a ride, any round (seconds on the
    /// window's axis; `RaptorSearch.unreached` when none).
    let best: UnsafeMutablePointer<Int32>
    let bestRide: UnsafeMutablePointer<Int32>
    /// Per round × stop: the arrival and how it was reached, and the same by a ride. A label
    /// is read only where its arrival was written by the same search (the journey is read
    /// back along reached cells), so labels are not reset between searches.
    let arrivals: UnsafeMutablePointer<Int32>
    let labels: UnsafeMutablePointer<RaptorSearch.Label>
    let rideArrivals: UnsafeMutablePointer<Int32>
    let rideLabels: UnsafeMutablePointer<RaptorSearch.Label>
    /// Per round, a bit per stop (`words` words): `improved`, the stops whose arrival the round
    /// wrote (their lanes are scanned next round); `rode`, those whose ride arrival it wrote
    /// (walks start from them).
    let words: Int
    let improved: UnsafeMutablePointer<UInt64>
    let rode: UnsafeMutablePointer<UInt64>
    /// Per lane of the window (`ServiceWindow`): the first and the last position marked last
    /// round (Int32.max first: not queued), and the lanes queued (at most every lane once).
    let queueIndex: UnsafeMutablePointer<Int32>
    let queueLast: UnsafeMutablePointer<Int32>
    let queued: UnsafeMutablePointer<Int32>

    init(stopCount: Int, laneCount: Int, rounds: Int) {
        self.stopCount = stopCount
        self.laneCount = laneCount
        cellCount = (rounds + 1) * stopCount
        func make<T>(_ count: Int, _ value: T) -> UnsafeMutablePointer<T> {
            let memory = UnsafeMutablePointer<T>.allocate(capacity: max(1, count))
            memory.initialize(repeating: value, count: max(1, count))
            return memory
        }
        best = make(stopCount, RaptorSearch.unreached)
        bestRide = make(stopCount, RaptorSearch.unreached)
        arrivals = make(cellCount, RaptorSearch.unreached)
        rideArrivals = make(cellCount, RaptorSearch.unreached)
        labels = make(cellCount, .none)
        rideLabels = make(cellCount, .none)
        words = (stopCount + 63) / 64
        improved = make((rounds + 1) * words, 0)
        rode = make((rounds + 1) * words, 0)
        queueIndex = make(laneCount, .max)
        queueLast = make(laneCount, 0)
        queued = make(laneCount, 0)
    }

    deinit {
        for memory in [best, bestRide, arrivals, rideArrivals, queueIndex, queueLast, queued] { memory.deallocate() }
        labels.deallocate()
        rideLabels.deallocate()
        improved.deallocate()
        rode.deallocate()
    }

    /// Whether a search over `stopCount` stops, `laneCount` lanes and `rounds` rounds fits.
    func fits(stopCount: Int, laneCount: Int, rounds: Int) -> Bool {
        self.stopCount == stopCount && self.laneCount >= laneCount && cellCount >= (rounds + 1) * stopCount
    }

    /// Every cell and stop the last search wrote, in its rounds `0..<rounds`, back to unreached.
    func reset(rounds: Int) {
        for round in 0..<rounds {
            let base = round * stopCount
            for word in (round * words)..<((round + 1) * words) {
                var bits = improved[word] | rode[word]
                improved[word] = 0
                rode[word] = 0
                while bits != 0 {
                    let stop = (word - round * words) << 6 | bits.trailingZeroBitCount
                    bits &= bits &- 1
                    arrivals[base + stop] = RaptorSearch.unreached
                    rideArrivals[base + stop] = RaptorSearch.unreached
                    best[stop] = RaptorSearch.unreached
                    bestRide[stop] = RaptorSearch.unreached
                }
            }
        }
    }
}

/// Searches' buffers waiting for the next query; one per search running at once, at most
/// `capacity` kept (the server plans on a few threads, `PlannerPool`; each set holds
/// (rounds + 1) × stops × 32 bytes, 0.8 MB on Halifax with nine rounds).
final class RaptorBufferPool: Sendable {
    private let free = Mutex<[RaptorBuffers]>([])
    let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// A reset set that fits the search, made when none waiting does.
    func take(stopCount: Int, laneCount: Int, rounds: Int) -> RaptorBuffers {
        let waiting = free.withLock { pool -> RaptorBuffers? in
            guard let index = pool.lastIndex(where: { $0.fits(stopCount: stopCount, laneCount: laneCount, rounds: rounds) }) else { return nil }
            return pool.remove(at: index)
        }
        return waiting ?? RaptorBuffers(stopCount: stopCount, laneCount: laneCount, rounds: max(rounds, 9))
    }

    /// Takes back a set whose search has reset it.
    func give(_ buffers: RaptorBuffers) {
        free.withLock { pool in
            if pool.count < capacity { pool.append(buffers) }
        }
    }
}
