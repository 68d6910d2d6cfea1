import HeraldCore
import HeraldDispatch
import HeraldGeo

/// A place a rider names: coordinates for routing, address and `place_id` as the stable
/// reference.
public struct Place: Sendable, Equatable {
    public var point: GeoPoint
    public var address: String?
    public var placeID: String?

    public init(point: GeoPoint, address: String? = nil, placeID: String? = nil) {
        self.point = point
        self.address = address
        self.placeID = placeID
    }

    /// Reads `{latitude, longitude, address?, place_id?}` under `name`, naming every bad field.
    static func parse(_ value: JSONValue?, _ name: String, _ v: inout FieldValidator) -> Place? {
        guard case .object(let object)? = value else {
            v.fail(
                name,
                value == nil || value == .null
                    ? "is required: {latitude, longitude, address, place_id}" : "must be an object {latitude, longitude, address, place_id}")
            return nil
        }
        for key in object.keys.sorted() where !["latitude", "longitude", "address", "place_id"].contains(key) {
            v.fail("\(name).\(key)", "is not a known field")
        }
        func coordinate(_ key: String, _ range: ClosedRange<Double>) -> Double? {
            switch object[key] {
            case .number(let value)? where value.isFinite && range.contains(value): return value
            case nil, .null?: v.fail("\(name).\(key)", "is required")
            default: v.fail("\(name).\(key)", "must be a number from \(Int(range.lowerBound)) to \(Int(range.upperBound))")
            }
            return nil
        }
        let lat = coordinate("latitude", -90...90)
        let lng = coordinate("longitude", -180...180)
        let address = v.text(object, "address", max: 500, required: false, field: "\(name).address")
        let placeID = v.text(object, "place_id", max: 200, required: false, field: "\(name).place_id")
        guard let lat, let lng, let point = GeoPoint.validated(latitude: lat, longitude: lng) else { return nil }
        return Place(point: point, address: address, placeID: placeID)
    }
}

/// `POST /ride-requests`, validated.
public struct RideRequestInput: Sendable, Equatable {
    public var pickup: Place
    public var dropoff: Place
    public var rideType: String
    public var passengerCount: Int
    public var paymentMethodID: String?
    /// The surge multiplier the rider was shown and accepted (nil: none was shown).
    public var confirmedSurge: Double?

    public init(
        pickup: Place, dropoff: Place, rideType: String = "STANDARD", passengerCount: Int = 1, paymentMethodID: String? = nil, confirmedSurge: Double? = nil
    ) {
        self.pickup = pickup
        self.dropoff = dropoff
        self.rideType = rideType
        self.passengerCount = passengerCount
        self.paymentMethodID = paymentMethodID
        self.confirmedSurge = confirmedSurge
    }

    /// The longest ride Herald prices (a typo in a coordinate is not a 4,000 km trip).
    public static let maxDistanceMeters = 300_000.0

    public static func parse(_ body: [String: JSONValue], config: TripsConfig, estimateOnly: Bool = false) throws -> RideRequestInput {
        var v = FieldValidator()
        let known: Set<String> = ["pickup", "dropoff", "ride_type", "passenger_count", "payment_method_id", "surge_multiplier"]
        for key in body.keys.sorted() where !known.contains(key) { v.fail(key, "is not a known field") }
        let pickup = Place.parse(body["pickup"], "pickup", &v)
        let dropoff = Place.parse(body["dropoff"], "dropoff", &v)
        var rideType = "STANDARD"
        switch body["ride_type"] {
        case nil, .null?: if config.rideTypes[rideType] == nil { v.fail("ride_type", "is required") }
        case .string(let name)? where config.rideTypes[name] != nil: rideType = name
        default: v.fail("ride_type", "must be one of \(config.rideTypes.keys.sorted().joined(separator: ", "))")
        }
        let capacity = config.rideTypes[rideType]?.capacity ?? 4
        var passengers = 1
        switch body["passenger_count"] {
        case nil, .null?: break
        case .number(let n)? where n.rounded() == n && n >= 1 && n <= Double(capacity): passengers = Int(n)
        default: v.fail("passenger_count", "must be a whole number from 1 to \(capacity) for \(rideType)")
        }
        let payment = v.text(body, "payment_method_id", max: 255, required: false)
        var surge: Double?
        switch body["surge_multiplier"] {
        case nil, .null?: break
        case .number(let n)? where n.isFinite && n >= 1 && n <= 10: surge = n
        default: v.fail("surge_multiplier", "must be the multiplier you were shown, from 1 to 10")
        }
        if let pickup, let dropoff {
            let meters = Haversine.distanceMeters(pickup.point, dropoff.point)
            if meters < 50 { v.fail("dropoff", "must be at least 50 m from the pickup") }
            if meters > maxDistanceMeters { v.fail("dropoff", "must be within \(Int(maxDistanceMeters / 1000)) km of the pickup") }
        }
        try v.validate()
        return RideRequestInput(
            pickup: pickup!, dropoff: dropoff!, rideType: rideType, passengerCount: passengers, paymentMethodID: payment, confirmedSurge: surge)
    }
}

/// `PUT /drivers/me/vehicle`, validated.
public struct VehicleInput: Sendable, Equatable {
    public var make: String
    public var model: String
    public var color: String
    public var licensePlate: String
    public var capacity: Int
    public var rideTypes: [String]

    public static func parse(_ body: [String: JSONValue], config: TripsConfig) throws -> VehicleInput {
        var v = FieldValidator()
        let known: Set<String> = ["make", "model", "color", "license_plate", "capacity", "ride_types"]
        for key in body.keys.sorted() where !known.contains(key) { v.fail(key, "is not a known field") }
        let make = v.text(body, "make", max: 60, required: true)
        let model = v.text(body, "model", max: 60, required: true)
        let color = v.text(body, "color", max: 40, required: true)
        let plate = v.text(body, "license_plate", max: 20, required: true)
        var capacity = 4
        switch body["capacity"] {
        case nil, .null?: break
        case .number(let n)? where n.rounded() == n && n >= 1 && n <= 20: capacity = Int(n)
        default: v.fail("capacity", "must be a whole number from 1 to 20")
        }
        var types = ["STANDARD"]
        switch body["ride_types"] {
        case nil, .null?: break
        case .array(let items)? where !items.isEmpty && items.count <= 20:
            types = []
            for (index, item) in items.enumerated() {
                if case .string(let name) = item, config.rideTypes[name] != nil {
                    if !types.contains(name) { types.append(name) }
                } else {
                    v.fail("ride_types[\(index)]", "must be one of \(config.rideTypes.keys.sorted().joined(separator: ", "))")
                }
            }
        default: v.fail("ride_types", "must be a list of ride types")
        }
        try v.validate()
        return VehicleInput(make: make!, model: model!, color: color!, licensePlate: plate!, capacity: capacity, rideTypes: types)
    }
}
