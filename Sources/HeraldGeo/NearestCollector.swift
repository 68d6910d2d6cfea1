/// Accumulates the drivers a query finds, keeping only the best `limit` when that is fewer
/// than the grid holds.
///
/// Bounded, it is a max-heap on (haversine, id), so its top is the current k-th best: the
/// scan skips anything farther, and the ring search stops once no unvisited cell can beat it.
/// Unbounded (a broadcast to everyone in range), it just collects and sorts at the end.
struct NearestCollector {
    struct Candidate {
        var haversine: Double
        var slot: Int32
    }

    let limit: Int
    let isBounded: Bool
    private(set) var items: [Candidate] = []
    /// Candidates with a larger haversine cannot enter: the radius's, or the k-th best's once full.
    private(set) var cutoff: Double
    private let radiusHaversine: Double

    init(limit: Int, driverCount: Int, radiusHaversine: Double) {
        self.limit = limit
        isBounded = limit < driverCount
        self.radiusHaversine = radiusHaversine
        cutoff = radiusHaversine
        if isBounded { items.reserveCapacity(limit) }
    }

    var isFull: Bool { isBounded && items.count == limit }

    /// The k-th best haversine so far, when `limit` candidates have been found.
    var kthBest: Double? { isFull ? items[0].haversine : nil }

    @inline(__always)
    mutating func offer(haversine: Double, slot: Int32, ids: DriverIDDirectory) {
        let candidate = Candidate(haversine: haversine, slot: slot)
        guard isBounded else {
            items.append(candidate)
            return
        }
        if items.count < limit {
            items.append(candidate)
            siftUp(items.count - 1, ids)
            if items.count == limit { cutoff = min(radiusHaversine, items[0].haversine) }
            return
        }
        guard Self.isWorse(items[0], than: candidate, ids) else { return }
        items[0] = candidate
        siftDown(0, ids)
        cutoff = min(radiusHaversine, items[0].haversine)
    }

    /// The matches within `radiusMeters`, nearest first, ties by id.
    func matches(radiusMeters: Double, ids: DriverIDDirectory) -> [DriverMatch] {
        var ranked: [(distance: Double, slot: Int32)] = []
        ranked.reserveCapacity(items.count)
        for item in items {
            let distance = HaversineKernel.distanceMeters(haversine: item.haversine)
            if distance <= radiusMeters { ranked.append((distance, item.slot)) }
        }
        ranked.sort { a, b in
            a.distance < b.distance || (a.distance == b.distance && ids.idIsLess(a.slot, b.slot))
        }
        return ranked.prefix(limit).map { DriverMatch(driverID: ids.id(of: $0.slot), distanceMeters: $0.distance) }
    }

    @inline(__always)
    private static func isWorse(_ a: Candidate, than b: Candidate, _ ids: DriverIDDirectory) -> Bool {
        a.haversine > b.haversine || (a.haversine == b.haversine && ids.idIsLess(b.slot, a.slot))
    }

    private mutating func siftUp(_ start: Int, _ ids: DriverIDDirectory) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.isWorse(items[child], than: items[parent], ids) else { return }
            items.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int, _ ids: DriverIDDirectory) {
        var parent = start
        let count = items.count
        while true {
            let left = 2 * parent + 1
            if left >= count { return }
            var worst = left
            let right = left + 1
            if right < count && Self.isWorse(items[right], than: items[left], ids) { worst = right }
            guard Self.isWorse(items[worst], than: items[parent], ids) else { return }
            items.swapAt(parent, worst)
            parent = worst
        }
    }
}
