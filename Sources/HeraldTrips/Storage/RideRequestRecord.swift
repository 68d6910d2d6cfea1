/// A rider's request before matching: one row of `ride_requests`. Times are epoch ms.
public struct RideRequestRecord: Sendable, Equatable, Codable {
    public var id: String
    public var riderID: String
    /// Stored as its raw value (`ride_requests.state`).
    public var state: RideRequestState
    public var pickupLatitude: Double
    public var pickupLongitude: Double
    public var pickupAddress: String?
    public var pickupPlaceID: String?
    public var dropoffLatitude: Double
    public var dropoffLongitude: Double
    public var dropoffAddress: String?
    public var dropoffPlaceID: String?
    public var rideType: String
    public var passengerCount: Int
    public var paymentMethodID: String?
    public var distanceM: Int64
    public var durationS: Int64
    public var fareMinMinor: Int64
    public var fareMaxMinor: Int64
    public var currency: String
    public var surgeMultiplier: Double
    public var surgeCell: String
    public var searchRadiusM: Int64
    public var offerRound: Int
    public var nextRoundAt: Int64?
    public var expiresAt: Int64
    public var tripID: String?
    public var driverID: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, state, currency
        case riderID = "rider_id"
        case pickupLatitude = "pickup_latitude"
        case pickupLongitude = "pickup_longitude"
        case pickupAddress = "pickup_address"
        case pickupPlaceID = "pickup_place_id"
        case dropoffLatitude = "dropoff_latitude"
        case dropoffLongitude = "dropoff_longitude"
        case dropoffAddress = "dropoff_address"
        case dropoffPlaceID = "dropoff_place_id"
        case rideType = "ride_type"
        case passengerCount = "passenger_count"
        case paymentMethodID = "payment_method_id"
        case distanceM = "distance_m"
        case durationS = "duration_s"
        case fareMinMinor = "fare_min_minor"
        case fareMaxMinor = "fare_max_minor"
        case surgeMultiplier = "surge_multiplier"
        case surgeCell = "surge_cell"
        case searchRadiusM = "search_radius_m"
        case offerRound = "offer_round"
        case nextRoundAt = "next_round_at"
        case expiresAt = "expires_at"
        case tripID = "trip_id"
        case driverID = "driver_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
