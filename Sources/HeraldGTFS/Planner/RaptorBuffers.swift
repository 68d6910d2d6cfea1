import Synchronization

/// A search's per-stop and per-round arrays, kept between queries: a query on a city's feed
/// touches a few thousand of its (rounds + 1) × stops cells, so writing every cell afresh
/// (1.5 MB for 2,381 stops and nine rounds) cost more than the search. A search records the
/// cells it wrote (`touched`) and `reset()` puts only those back.
struct RaptorBuffers {
    var best: [Int64] = []
    var bestRide: [Int64] = []
    var arrivals: [Int64] = []
    var labels: [RaptorSearch.Label] = []
    var rideArrivals: [Int64] = []
    var rideLabels: [RaptorSearch.Label] = []
    var marked: [Bool] = []
    /// Per pattern: the first position to scan this round (Int32.max: not queued).
    var queueIndex: [Int32] = []
    /// Cells (round × stops + stop) written by the current search.
    var touched: [Int32] = []
    var stopCount = 0

    /// Ready for a search over `stopCount` stops, `patterns` patterns and `cells` cells
    /// (every value unreached).
    mutating func prepare(stopCount: Int, patterns: Int, cells: Int) {
        if self.stopCount != stopCount || queueIndex.count != patterns {
            self = RaptorBuffers()
            self.stopCount = stopCount
            best = [Int64](repeating: RaptorSearch.unreached, count: stopCount)
            bestRide = best
            marked = [Bool](repeating: false, count: stopCount)
            queueIndex = [Int32](repeating: .max, count: patterns)
        }
        if arrivals.count < cells {
            let more = cells - arrivals.count
            arrivals.append(contentsOf: repeatElement(RaptorSearch.unreached, count: more))
            rideArrivals.append(contentsOf: repeatElement(RaptorSearch.unreached, count: more))
            labels.append(contentsOf: repeatElement(.none, count: more))
            rideLabels.append(contentsOf: repeatElement(.none, count: more))
        }
    }

    /// Every cell and stop the last search wrote back to unreached.
    mutating func reset() {
        for cell in touched {
            let cell = Int(cell)
            let stop = cell % stopCount
            arrivals[cell] = RaptorSearch.unreached
            rideArrivals[cell] = RaptorSearch.unreached
            labels[cell] = .none
            rideLabels[cell] = .none
            best[stop] = RaptorSearch.unreached
            bestRide[stop] = RaptorSearch.unreached
            marked[stop] = false
        }
        touched.removeAll(keepingCapacity: true)
    }
}

/// Searches' buffers waiting for the next query; one per search running at once, at most
/// `capacity` kept (the server plans on one thread, `BlockingWork`; a few more cover the
/// itinerary watch's replans; each holds (rounds + 1) × stops × 64 bytes, 1.5 MB on
/// Halifax with nine rounds).
final class RaptorBufferPool: Sendable {
    private let free = Mutex<[RaptorBuffers]>([])
    let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    func take() -> RaptorBuffers {
        free.withLock { $0.popLast() } ?? RaptorBuffers()
    }

    /// Takes back buffers whose search has reset them.
    func give(_ buffers: RaptorBuffers) {
        free.withLock { pool in
            if pool.count < capacity { pool.append(buffers) }
        }
    }
}
