import HeraldDispatch

/// A ride request offered to one driver: one row of `ride_offers`. Times are epoch ms.
public struct RideOfferRecord: Sendable, Equatable, Codable {
    public var requestID: String
    public var driverID: String
    /// The offer round that reached the driver (the search widens each round).
    public var round: Int
    public var distanceM: Int64?
    public var offeredAt: Int64
    /// nil while undecided; `won` for the driver who took it, else why the others lost it.
    public var outcome: OfferOutcome?

    enum CodingKeys: String, CodingKey {
        case round, outcome
        case requestID = "request_id"
        case driverID = "driver_id"
        case distanceM = "distance_m"
        case offeredAt = "offered_at"
    }
}
