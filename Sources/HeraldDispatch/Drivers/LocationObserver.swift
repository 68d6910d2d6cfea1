/// Sees every driver position report, before and after the spatial index takes it: the
/// trips module rate-limits by trip state and turns samples of a trip into the rider's
/// live map. Dispatch stays ignorant of trips.
public protocol LocationObserver: Sendable {
    /// Called first for every report received at `receivedAt` (epoch ms): a throttle answer
    /// refuses it (nothing is recorded), nil lets it through.
    func admit(driverID: String, receivedAt: Int64) async -> LocationThrottle?
    /// The report was newer than the last one and is now the driver's position.
    func accepted(driverID: String, update: LocationUpdate, receivedAt: Int64) async
}

/// A refused report: when to send again, and the limit in force (`"1/s"`, `"1/30s"`).
public struct LocationThrottle: Sendable, Equatable {
    public var retryAfterMs: Int64
    public var limit: String

    public init(retryAfterMs: Int64, limit: String) {
        self.retryAfterMs = retryAfterMs
        self.limit = limit
    }
}
