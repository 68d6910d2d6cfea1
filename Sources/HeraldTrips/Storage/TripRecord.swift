/// A matched ride: one row of `trips`. Times are epoch ms; money is minor units.
public struct TripRecord: Sendable, Equatable, Codable {
    public var id: String
    public var requestID: String
    public var riderID: String
    public var driverID: String
    /// Stored as its raw value (`trips.state`).
    public var state: TripState
    /// Bumped on every change a client can see; the ETag is `"trip-v{version}"`.
    public var version: Int64
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
    public var distanceM: Int64
    public var durationS: Int64
    public var fareMinMinor: Int64
    public var fareMaxMinor: Int64
    public var currency: String
    public var surgeMultiplier: Double
    public var flags: Int
    public var lastFlag: String?
    public var cancelledBy: String?
    public var cancelReason: String?
    public var acceptedAt: Int64
    public var arrivedAt: Int64?
    public var startedAt: Int64?
    public var completedAt: Int64?
    public var cancelledAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Set at COMPLETED (`FinalFare`).
    public var finalFareMinor: Int64? = nil
    public var travelledDistanceM: Int64? = nil
    public var travelledDurationS: Int64? = nil
    /// The rider's rating of the driver (1–5) and the driver's of the rider, once each.
    public var riderRating: Int? = nil
    public var riderComment: String? = nil
    public var driverRating: Int? = nil
    public var driverComment: String? = nil

    public var etag: String { "\"trip-v\(version)\"" }

    enum CodingKeys: String, CodingKey {
        case id, state, version, currency, flags
        case requestID = "request_id"
        case riderID = "rider_id"
        case driverID = "driver_id"
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
        case distanceM = "distance_m"
        case durationS = "duration_s"
        case fareMinMinor = "fare_min_minor"
        case fareMaxMinor = "fare_max_minor"
        case surgeMultiplier = "surge_multiplier"
        case lastFlag = "last_flag"
        case cancelledBy = "cancelled_by"
        case cancelReason = "cancel_reason"
        case acceptedAt = "accepted_at"
        case arrivedAt = "arrived_at"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case cancelledAt = "cancelled_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case finalFareMinor = "final_fare_minor"
        case travelledDistanceM = "travelled_distance_m"
        case travelledDurationS = "travelled_duration_s"
        case riderRating = "rider_rating"
        case riderComment = "rider_comment"
        case driverRating = "driver_rating"
        case driverComment = "driver_comment"
    }
}

extension TripRecord {
    /// The trip a request becomes when `driverID` accepts it.
    public init(id: String, request r: RideRequestRecord, driverID: String, now: Int64) {
        self.init(
            id: id, requestID: r.id, riderID: r.riderID, driverID: driverID, state: .accepted, version: 1,
            pickupLatitude: r.pickupLatitude, pickupLongitude: r.pickupLongitude, pickupAddress: r.pickupAddress, pickupPlaceID: r.pickupPlaceID,
            dropoffLatitude: r.dropoffLatitude, dropoffLongitude: r.dropoffLongitude, dropoffAddress: r.dropoffAddress,
            dropoffPlaceID: r.dropoffPlaceID, rideType: r.rideType, passengerCount: r.passengerCount, distanceM: r.distanceM,
            durationS: r.durationS, fareMinMinor: r.fareMinMinor, fareMaxMinor: r.fareMaxMinor, currency: r.currency,
            surgeMultiplier: r.surgeMultiplier, flags: 0, lastFlag: nil, cancelledBy: nil, cancelReason: nil,
            acceptedAt: now, arrivedAt: nil, startedAt: nil,
            completedAt: nil, cancelledAt: nil, createdAt: now, updatedAt: now)
    }
}
