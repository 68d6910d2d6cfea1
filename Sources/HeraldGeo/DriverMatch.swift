/// One result of `DriverGrid.nearest`: the distance comes along because dispatch ranks and
/// filters by it and clients show it, and recomputing it would need the position again.
public struct DriverMatch: Sendable, Equatable {
    public var driverID: String
    /// Great-circle distance from the query centre to the driver's stored position.
    public var distanceMeters: Double

    public init(driverID: String, distanceMeters: Double) {
        self.driverID = driverID
        self.distanceMeters = distanceMeters
    }
}
