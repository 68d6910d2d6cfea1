/// Value type: the grid of driver positions. Not thread-safe by itself.
///
/// Dispatch asks "who is near this pickup" thousands of times a second over a million moving
/// drivers, so the grid is built for that query and for compactness (about 86 bytes per
/// driver with 26-byte ids): drivers are bucketed into roughly square cells of
/// `cellSizeMeters`, each cell's positions stored contiguously; ids live in an arena with an
/// open-addressing table (`DriverIDDirectory`); per-driver bookkeeping is struct-of-arrays
/// indexed by a slot number, and removed slots are reused.
///
/// `nearest` with a small limit searches outwards in rings and stops as soon as no unvisited
/// cell can hold a closer driver, so its cost follows the local density, not the radius.
/// With a large limit (a broadcast) it visits every cell the radius touches, or every
/// occupied cell if that is fewer. Positions are kept to 1e-7° (≈ 1 cm).
public struct DriverGrid: Sendable {
    /// 250 m: in a dense area (thousands of drivers per km²) a cell then holds tens to
    /// hundreds of drivers, so a "20 nearest" query reads a handful of cells; in a sparse one
    /// the ring search adds cells until it has 20. Larger cells make dense queries scan more
    /// drivers; smaller ones make every query do more cell lookups.
    public static let defaultCellSizeMeters: Double = 250

    let geometry: GridGeometry
    private(set) var cells = CellStore()
    private(set) var ids = DriverIDDirectory()
    /// Per slot: its cell number (-1: free slot).
    private var slotCell: [Int32] = []
    /// Per slot: its index in the cell's entries; for a free slot, the next free slot (-1: none).
    private var slotIndex: [Int32] = []
    /// Per slot: the receipt time in epoch milliseconds.
    private var slotTime: [Int64] = []
    private var firstFreeSlot: Int32 = -1

    public init(cellSizeMeters: Double = DriverGrid.defaultCellSizeMeters) {
        geometry = GridGeometry(cellSizeMeters: cellSizeMeters)
    }

    public var cellSizeMeters: Double { geometry.cellSizeMeters }

    public var count: Int { ids.count }

    /// Bytes the grid's storage reserves (array capacities and headers, not malloc's own
    /// overhead): for a memory gauge and capacity planning, since `MemoryLayout` of a grid
    /// says nothing about its heap storage.
    public var approximateMemoryBytes: Int {
        cells.approximateBytes + ids.approximateBytes
            + slotCell.capacity * 4 + slotIndex.capacity * 4 + slotTime.capacity * 8
    }

    /// Slots ever allocated (live plus free); for tests of slot reuse.
    var slotCapacity: Int { slotCell.count }

    /// Inserts or moves a driver. `at` is the server receipt time in epoch milliseconds.
    /// `point` must be valid (see `GeoPoint.validated`); an invalid one is a programming error.
    public mutating func upsert(_ driverID: String, at point: GeoPoint, time: Int64) {
        precondition(point.isValid, "DriverGrid.upsert: invalid position \(point)")
        var id = driverID
        id.withUTF8 { utf8 in
            upsert(UnsafeRawBufferPointer(utf8), at: point, time: time)
        }
    }

    @discardableResult
    public mutating func remove(_ driverID: String) -> Bool {
        var id = driverID
        return id.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard let slot = ids.slot(for: bytes, hash: ids.hash(bytes)) else { return false }
            let s = Int(slot)
            removeFromCell(slot: slot)
            ids.remove(slot: slot)
            slotCell[s] = -1
            slotIndex[s] = firstFreeSlot
            firstFreeSlot = slot
            return true
        }
    }

    public func position(of driverID: String) -> (point: GeoPoint, time: Int64)? {
        var id = driverID
        return id.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard let slot = ids.slot(for: bytes, hash: ids.hash(bytes)) else { return nil }
            let s = Int(slot)
            let entry = cells.entry(cell: slotCell[s], index: slotIndex[s])
            let point = GeoPoint(
                latitude: FixedPoint.decode(entry.latitudeUnits), longitude: FixedPoint.decode(entry.longitudeUnits))
            return (point, slotTime[s])
        }
    }

    /// Every driver id in the grid (any order).
    public var driverIDs: [String] {
        var result: [String] = []
        result.reserveCapacity(count)
        for slot in slotCell.indices where slotCell[slot] >= 0 {
            result.append(ids.id(of: Int32(slot)))
        }
        return result
    }

    /// Drivers within `radiusMeters` of `center` (great-circle, inclusive), nearest first, ties by driver id,
    /// at most `limit`; drivers whose time is older than `freshSince` (epoch ms) are skipped when given.
    ///
    /// An invalid centre, a negative or NaN radius or a limit below 1 match nothing.
    public func nearest(to center: GeoPoint, radiusMeters: Double, limit: Int, freshSince: Int64? = nil) -> [DriverMatch] {
        guard center.isValid, radiusMeters >= 0, limit > 0, count > 0 else { return [] }
        let search = NearestSearch(grid: self, center: center, radiusMeters: radiusMeters, limit: limit, freshSince: freshSince)
        return search.run()
    }

    // MARK: - Internals shared with NearestSearch

    @inline(__always)
    func time(ofSlot slot: Int32) -> Int64 {
        slotTime[Int(slot)]
    }

    private mutating func upsert(_ id: UnsafeRawBufferPointer, at point: GeoPoint, time: Int64) {
        let entryLatitude = FixedPoint.encode(point.latitude)
        let entryLongitude = FixedPoint.encode(point.longitude)
        let key = geometry.cellKey(latitude: FixedPoint.decode(entryLatitude), longitude: FixedPoint.decode(entryLongitude))
        let hash = ids.hash(id)
        if let slot = ids.slot(for: id, hash: hash) {
            let s = Int(slot)
            slotTime[s] = time
            let entry = CellEntry(latitudeUnits: entryLatitude, longitudeUnits: entryLongitude, slot: slot)
            if cells.key(ofCell: slotCell[s]) == key {
                cells.replace(cell: slotCell[s], index: slotIndex[s], with: entry)
            } else {
                removeFromCell(slot: slot)
                let (cell, index) = cells.insert(entry, key: key)
                slotCell[s] = cell
                slotIndex[s] = index
            }
            return
        }
        let slot: Int32
        if firstFreeSlot >= 0 {
            slot = firstFreeSlot
            firstFreeSlot = slotIndex[Int(slot)]
        } else {
            precondition(slotCell.count < Int(Int32.max), "DriverGrid is full")
            slot = Int32(slotCell.count)
            slotCell.appendWithHeadroom(-1)
            slotIndex.appendWithHeadroom(-1)
            slotTime.appendWithHeadroom(0)
        }
        ids.insert(id: id, hash: hash, slot: slot)
        let entry = CellEntry(latitudeUnits: entryLatitude, longitudeUnits: entryLongitude, slot: slot)
        let (cell, index) = cells.insert(entry, key: key)
        let s = Int(slot)
        slotCell[s] = cell
        slotIndex[s] = index
        slotTime[s] = time
    }

    private mutating func removeFromCell(slot: Int32) {
        let s = Int(slot)
        if let moved = cells.remove(cell: slotCell[s], index: slotIndex[s]) {
            slotIndex[Int(moved)] = slotIndex[s]
        }
    }
}
