import Synchronization

/// Thread-safe wrapper the server shares between request handlers.
///
/// Every operation takes one short lock around a `DriverGrid`: a "20 nearest" query takes
/// microseconds, so a mutex costs less than the copy-on-write traffic a reader/writer split
/// over a value type would cause. Batch work (a bulk load, many updates from one message)
/// should use `withGrid` to take the lock once.
public final class DriverIndex: Sendable {
    private let grid: Mutex<DriverGrid>

    public init(cellSizeMeters: Double = DriverGrid.defaultCellSizeMeters) {
        grid = Mutex(DriverGrid(cellSizeMeters: cellSizeMeters))
    }

    public var count: Int {
        grid.withLock { $0.count }
    }

    /// Every driver id in the index (any order).
    public var driverIDs: [String] {
        grid.withLock { $0.driverIDs }
    }

    /// Inserts or moves a driver. `time` is the server receipt time in epoch milliseconds.
    public func upsert(_ driverID: String, at point: GeoPoint, time: Int64) {
        grid.withLock { $0.upsert(driverID, at: point, time: time) }
    }

    @discardableResult
    public func remove(_ driverID: String) -> Bool {
        grid.withLock { $0.remove(driverID) }
    }

    public func position(of driverID: String) -> (point: GeoPoint, time: Int64)? {
        grid.withLock { grid -> (point: GeoPoint, time: Int64)? in
            grid.position(of: driverID)
        }
    }

    /// See `DriverGrid.nearest(to:radiusMeters:limit:freshSince:)`.
    public func nearest(to center: GeoPoint, radiusMeters: Double, limit: Int, freshSince: Int64? = nil) -> [DriverMatch] {
        grid.withLock { $0.nearest(to: center, radiusMeters: radiusMeters, limit: limit, freshSince: freshSince) }
    }

    /// Runs `body` with the grid under the lock, for several operations at the cost of one lock.
    public func withGrid<Result: Sendable, Failure: Error>(
        _ body: (inout DriverGrid) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try grid.withLock { (grid: inout sending DriverGrid) throws(Failure) -> sending Result in
            try body(&grid)
        }
    }
}
