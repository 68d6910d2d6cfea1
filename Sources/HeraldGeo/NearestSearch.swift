/// One `DriverGrid.nearest` query: which cells to read, in what order, and when to stop.
///
/// With a limit below the driver count it grows a radius `r` from half a cell, reading only
/// the cells newly touched by the bounding box of the circle of radius `r`, and stops once it
/// has `limit` drivers no farther than `r` (every unread driver is farther than `r`). Once the
/// cells read (plus those still to read) would exceed the occupied cells, it reads the
/// remaining occupied cells within the full radius directly instead, which bounds the cost of
/// a wide search over a sparse grid.
struct NearestSearch {
    let grid: DriverGrid
    let center: GeoPoint
    let radiusMeters: Double
    let limit: Int
    let freshSince: Int64?
    let kernel: HaversineKernel

    init(grid: DriverGrid, center: GeoPoint, radiusMeters: Double, limit: Int, freshSince: Int64?) {
        self.grid = grid
        self.center = center
        // Beyond half the circumference every point is in range.
        self.radiusMeters = min(radiusMeters, .pi * Haversine.earthRadiusMeters)
        self.limit = limit
        self.freshSince = freshSince
        kernel = HaversineKernel(center: center)
    }

    func run() -> [DriverMatch] {
        // Slightly loose, so rounding cannot drop a driver exactly on the circle; the exact
        // distance check happens in `matches`.
        let radiusHaversine = HaversineKernel.haversine(distanceMeters: radiusMeters) * (1 + 1e-9)
        var collector = NearestCollector(limit: limit, driverCount: grid.count, radiusHaversine: radiusHaversine)
        let full = CapBounds(center: center, radiusMeters: radiusMeters)
        if collector.isBounded {
            searchRings(finalBounds: full, collector: &collector)
        } else if cellCount(of: full, notIn: nil) <= grid.cells.occupiedCount {
            visitCells(of: full, notIn: nil, collector: &collector)
        } else {
            visitOccupiedCells(of: full, notIn: nil, collector: &collector)
        }
        return collector.matches(radiusMeters: radiusMeters, ids: grid.ids)
    }

    private func searchRings(finalBounds: CapBounds, collector: inout NearestCollector) {
        let cellSize = grid.geometry.cellSizeMeters
        var radius = min(radiusMeters, cellSize / 2)
        var previous: CapBounds?
        var cellsRead = 0
        while true {
            let bounds = radius >= radiusMeters ? finalBounds : CapBounds(center: center, radiusMeters: radius)
            let newCells = cellCount(of: bounds, notIn: previous)
            if cellsRead + newCells > grid.cells.occupiedCount {
                visitOccupiedCells(of: finalBounds, notIn: previous, collector: &collector)
                return
            }
            visitCells(of: bounds, notIn: previous, collector: &collector)
            cellsRead += newCells
            if radius >= radiusMeters { return }
            // Every driver not read yet is farther than `radius`.
            if let kth = collector.kthBest, kth < HaversineKernel.haversine(distanceMeters: radius) { return }
            previous = bounds
            radius = min(radiusMeters, radius + max(cellSize / 2, radius / 4))
        }
    }

    private func cellCount(of bounds: CapBounds, notIn inner: CapBounds?) -> Int {
        let geometry = grid.geometry
        let innerRows = inner.map { geometry.rows(of: $0) }
        var total = 0
        for row in geometry.rows(of: bounds) {
            let span = geometry.columnSpan(row: row, bounds: bounds)
            let innerSpan = (inner != nil && innerRows!.contains(row)) ? geometry.columnSpan(row: row, bounds: inner!) : nil
            total += span.cellCount(notIn: innerSpan)
        }
        return total
    }

    private func visitCells(of bounds: CapBounds, notIn inner: CapBounds?, collector: inout NearestCollector) {
        let geometry = grid.geometry
        let cells = grid.cells
        let innerRows = inner.map { geometry.rows(of: $0) }
        for row in geometry.rows(of: bounds) {
            let span = geometry.columnSpan(row: row, bounds: bounds)
            let innerSpan = (inner != nil && innerRows!.contains(row)) ? geometry.columnSpan(row: row, bounds: inner!) : nil
            span.forEachColumn(notIn: innerSpan) { column in
                if let cell = cells.number(forKey: GridGeometry.cellKey(row: row, column: column)) {
                    scan(cell: cell, collector: &collector)
                }
            }
        }
    }

    private func visitOccupiedCells(of bounds: CapBounds, notIn inner: CapBounds?, collector: inout NearestCollector) {
        let geometry = grid.geometry
        for (key, cell) in grid.cells.numberByKey {
            guard geometry.contains(key: key, bounds: bounds) else { continue }
            if let inner, geometry.contains(key: key, bounds: inner) { continue }
            scan(cell: cell, collector: &collector)
        }
    }

    @inline(__always)
    private func scan(cell: Int32, collector: inout NearestCollector) {
        let kernel = kernel
        let freshSince = freshSince
        grid.cells.entries[Int(cell)].withUnsafeBufferPointer { entries in
            var cutoff = collector.cutoff
            for entry in entries {
                let h = kernel.haversine(latitudeUnits: entry.latitudeUnits, longitudeUnits: entry.longitudeUnits)
                guard h <= cutoff else { continue }
                if let freshSince, grid.time(ofSlot: entry.slot) < freshSince { continue }
                collector.offer(haversine: h, slot: entry.slot, ids: grid.ids)
                cutoff = collector.cutoff
            }
        }
    }
}
