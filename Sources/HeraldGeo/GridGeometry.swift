#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How positions map to cells: rows of equal latitude height, and in each row as many
/// columns as fit at least `cellSizeMeters` wide.
///
/// A plain degree grid would make cells ever narrower towards the poles (a query at 80°N would
/// visit six times as many cells as one at the equator, and one at the pole would visit a
/// whole ring of tiny cells). Narrowing the column count per row keeps every cell roughly
/// square, so cell visits per query stay the same at any latitude.
struct GridGeometry: Sendable {
    let cellSizeMeters: Double
    let rowHeightDegrees: Double
    let rowCount: Int

    init(cellSizeMeters: Double) {
        precondition(cellSizeMeters.isFinite && cellSizeMeters >= 1, "cellSizeMeters must be at least 1 m")
        self.cellSizeMeters = cellSizeMeters
        let metersPerDegree = Haversine.earthRadiusMeters * HaversineKernel.radiansPerDegree
        rowHeightDegrees = min(180, cellSizeMeters / metersPerDegree)
        rowCount = max(1, Int((180 / rowHeightDegrees).rounded(.up)))
    }

    @inline(__always)
    func row(latitude: Double) -> Int {
        let row = Int(((latitude + 90) / rowHeightDegrees).rounded(.down))
        return min(rowCount - 1, max(0, row))
    }

    /// Columns in `row`: as many as are at least a cell wide on the row's edge nearest the equator.
    func columnCount(row: Int) -> Int {
        let bottom = -90 + Double(row) * rowHeightDegrees
        let top = bottom + rowHeightDegrees
        let nearestEquator = bottom > 0 ? bottom : (top < 0 ? top : 0)
        let circumferenceDegrees = 360 * cos(nearestEquator * HaversineKernel.radiansPerDegree)
        return max(1, Int((circumferenceDegrees / rowHeightDegrees).rounded(.down)))
    }

    /// The column of a longitude in -180...180 (180 itself falls in the last column).
    @inline(__always)
    func column(longitude: Double, columnCount: Int) -> Int {
        let column = Int(((longitude + 180) * (Double(columnCount) / 360)).rounded(.down))
        return min(columnCount - 1, max(0, column))
    }

    @inline(__always)
    func cellKey(latitude: Double, longitude: Double) -> Int64 {
        let row = row(latitude: latitude)
        return Self.cellKey(row: row, column: column(longitude: longitude, columnCount: columnCount(row: row)))
    }

    @inline(__always)
    static func cellKey(row: Int, column: Int) -> Int64 {
        Int64(row) << 32 | Int64(column)
    }

    @inline(__always)
    static func rowAndColumn(of key: Int64) -> (row: Int, column: Int) {
        (Int(key >> 32), Int(key & 0xFFFF_FFFF))
    }

    func rows(of bounds: CapBounds) -> ClosedRange<Int> {
        row(latitude: bounds.minLatitude)...row(latitude: bounds.maxLatitude)
    }

    /// The columns of `row` that intersect `bounds`. Monotone in the bounds: a larger box
    /// gives a span containing the smaller one's.
    func columnSpan(row: Int, bounds: CapBounds) -> ColumnSpan {
        let count = columnCount(row: row)
        if bounds.coversAllLongitudes { return .full(count: count) }
        let scale = Double(count) / 360
        let low = Int(((bounds.minLongitude + 180) * scale).rounded(.down))
        let high = Int(((bounds.maxLongitude + 180) * scale).rounded(.down))
        if high - low + 1 >= count { return .full(count: count) }
        return ColumnSpan(low: low, high: high, count: count, isFull: false)
    }

    func contains(key: Int64, bounds: CapBounds) -> Bool {
        let (row, column) = Self.rowAndColumn(of: key)
        guard rows(of: bounds).contains(row) else { return false }
        return columnSpan(row: row, bounds: bounds).contains(column: column)
    }
}
