import HeraldCore
import HeraldDispatch
import HeraldGeo

/// The trips module's JSON shapes (the rideshare design's payloads).
public enum TripJSON {
    static func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null }
    static func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(Double(value)) }
    static func integer<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }

    static func place(_ lat: Double, _ lng: Double, _ address: String?, _ placeID: String?) -> JSONValue {
        ["latitude": .number(lat), "longitude": .number(lng), "address": text(address), "place_id": text(placeID)]
    }

    public static func fareEstimate(min: Int64, max: Int64, currency: String, surge: Double) -> JSONValue {
        ["min_amount_minor": integer(min), "max_amount_minor": integer(max), "currency": .string(currency), "surge_multiplier": .number(surge)]
    }

    public static func request(_ r: RideRequestRecord, estimatedPickupSeconds: Int? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "request_id": .string(r.id), "state": .string(r.state.rawValue),
            "allowed_transitions": .array(r.state.allowedTransitions.map(JSONValue.string)),
            "pickup": place(r.pickupLatitude, r.pickupLongitude, r.pickupAddress, r.pickupPlaceID),
            "dropoff": place(r.dropoffLatitude, r.dropoffLongitude, r.dropoffAddress, r.dropoffPlaceID),
            "ride_type": .string(r.rideType), "passenger_count": integer(r.passengerCount),
            "fare_estimate": fareEstimate(min: r.fareMinMinor, max: r.fareMaxMinor, currency: r.currency, surge: r.surgeMultiplier),
            "route": ["distance_meters": integer(r.distanceM), "duration_seconds": integer(r.durationS)],
            "search_radius_meters": integer(r.searchRadiusM), "created_at": time(r.createdAt), "expires_at": time(r.expiresAt),
            "trip_id": text(r.tripID),
        ]
        if let estimatedPickupSeconds {
            object["estimated_pickup_seconds"] = integer(estimatedPickupSeconds)
        } else {
            object["estimated_pickup_seconds"] = .null
        }
        return .object(object)
    }

    /// What a driver is offered (`ride:new`).
    static func offer(_ r: RideRequestRecord, distanceMeters: Double) -> JSONValue {
        [
            "request_id": .string(r.id), "ride_type": .string(r.rideType), "passenger_count": integer(r.passengerCount),
            "pickup": place(r.pickupLatitude, r.pickupLongitude, r.pickupAddress, r.pickupPlaceID),
            "dropoff": place(r.dropoffLatitude, r.dropoffLongitude, r.dropoffAddress, r.dropoffPlaceID),
            "fare_estimate": fareEstimate(min: r.fareMinMinor, max: r.fareMaxMinor, currency: r.currency, surge: r.surgeMultiplier),
            "route": ["distance_meters": integer(r.distanceM), "duration_seconds": integer(r.durationS)],
            "distance_meters": integer(Int64(distanceMeters.rounded())), "expires_at": time(r.expiresAt),
        ]
    }

    /// A request as the driver it was offered to sees it: the offer (`ride:new`'s fields,
    /// nothing of the rider), its state, and how the offer stands: `open`, `won` (with the
    /// trip), or why it closed (`lost` to another driver, `cancelled`, `expired`).
    public static func offeredRequest(_ r: RideRequestRecord, _ offer: RideOfferRecord) -> JSONValue {
        guard case .object(var object) = self.offer(r, distanceMeters: Double(offer.distanceM ?? 0)) else { return .null }
        object["state"] = .string(r.state.rawValue)
        let outcome = offer.outcome?.rawValue ?? (r.state == .searching ? "open" : r.state.rawValue.lowercased())
        object["offer"] = ["round": integer(offer.round), "offered_at": time(offer.offeredAt), "outcome": .string(outcome)]
        object["trip_id"] = offer.outcome == .won ? text(r.tripID) : .null
        if offer.distanceM == nil { object["distance_meters"] = .null }
        return .object(object)
    }

    static func firstName(_ name: String?) -> String? {
        name?.split(separator: " ").first.map(String.init)
    }

    /// The whole trip as `GET /trips/{id}` shows it. Operators also see the fraud flags and
    /// the cancellation's details.
    public static func trip(_ t: TripRecord, rider: (name: String?, rating: Double?), driver: DriverRecord?, vehicle: VehicleRecord?, forOperator: Bool)
        -> JSONValue
    {
        var driverObject: [String: JSONValue] = [
            "id": .string(t.driverID), "first_name": text(firstName(driver?.name)), "rating": number(driver?.averageRating),
            "photo_url": text(driver?.photoURL),
        ]
        driverObject["vehicle"] =
            vehicle.map { v in
                [
                    "make": .string(v.make), "model": .string(v.model), "color": .string(v.color), "license_plate": .string(v.licensePlate),
                    "capacity": integer(v.capacity),
                ]
            } ?? .null
        let pickup = GeoPoint(latitude: t.pickupLatitude, longitude: t.pickupLongitude)
        let dropoff = GeoPoint(latitude: t.dropoffLatitude, longitude: t.dropoffLongitude)
        var object: [String: JSONValue] = [
            "trip_id": .string(t.id), "request_id": .string(t.requestID), "state": .string(t.state.rawValue),
            "allowed_transitions": .array(t.state.allowedTransitions.map { .string($0.rawValue) }),
            "rider": ["id": .string(t.riderID), "first_name": text(firstName(rider.name)), "rating": number(rider.rating)],
            "driver": .object(driverObject),
            "pickup": place(t.pickupLatitude, t.pickupLongitude, t.pickupAddress, t.pickupPlaceID),
            "dropoff": place(t.dropoffLatitude, t.dropoffLongitude, t.dropoffAddress, t.dropoffPlaceID),
            "route": [
                "polyline": .string(Polyline.encode([pickup, dropoff])), "distance_meters": integer(t.distanceM), "duration_seconds": integer(t.durationS),
            ],
            "fare": fare(t),
            "ratings": ["by_rider": integer(t.riderRating), "by_driver": integer(t.driverRating)],
            "ride_type": .string(t.rideType), "passenger_count": integer(t.passengerCount),
            "accepted_at": time(t.acceptedAt), "arrived_at": time(t.arrivedAt), "started_at": time(t.startedAt),
            "completed_at": time(t.completedAt), "cancelled_at": time(t.cancelledAt), "cancelled_by": text(t.cancelledBy),
            "created_at": time(t.createdAt), "updated_at": time(t.updatedAt), "etag": .string("trip-v\(t.version)"),
        ]
        if forOperator {
            object["rating_comments"] = ["by_rider": text(t.riderComment), "by_driver": text(t.driverComment)]
            object["flags"] = ["count": integer(t.flags), "last": text(t.lastFlag)]
            object["cancel_reason"] = text(t.cancelReason)
        }
        return .object(object)
    }

    /// A trip in a history list: what it was and how it ended, without the other party's
    /// details (`GET /trips/{id}` has them).
    public static func summary(_ t: TripRecord) -> JSONValue {
        [
            "trip_id": .string(t.id), "request_id": .string(t.requestID), "state": .string(t.state.rawValue),
            "pickup": place(t.pickupLatitude, t.pickupLongitude, t.pickupAddress, t.pickupPlaceID),
            "dropoff": place(t.dropoffLatitude, t.dropoffLongitude, t.dropoffAddress, t.dropoffPlaceID),
            "ride_type": .string(t.rideType), "fare": fare(t), "created_at": time(t.createdAt), "completed_at": time(t.completedAt),
            "cancelled_at": time(t.cancelledAt),
        ]
    }

    /// The estimate, and once COMPLETED what was charged: `final_amount_minor` for
    /// `distance_meters` driven in `duration_seconds`.
    public static func fare(_ t: TripRecord) -> JSONValue {
        var object: [String: JSONValue] = [
            "estimate_min_minor": integer(t.fareMinMinor), "estimate_max_minor": integer(t.fareMaxMinor), "currency": .string(t.currency),
            "surge_multiplier": .number(t.surgeMultiplier),
        ]
        if let final = t.finalFareMinor {
            object["final_amount_minor"] = integer(final)
            object["distance_meters"] = integer(t.travelledDistanceM)
            object["duration_seconds"] = integer(t.travelledDurationS)
        }
        return .object(object)
    }

    /// `trip_state_changed`'s payload.
    static func stateChanged(_ t: TripRecord, previous: TripState, by actor: TripActor, context: JSONValue, at: Int64) -> JSONValue {
        [
            "trip_id": .string(t.id), "previous_state": .string(previous.rawValue), "state": .string(t.state.rawValue),
            "allowed_transitions": .array(t.state.allowedTransitions.map { .string($0.rawValue) }),
            "triggered_by": .string(actor.rawValue), "timestamp": time(at), "context": context,
        ]
    }

    /// A position as `state_sync` and the REST trail show it to the rider.
    static func latestLocation(_ r: TripLocationRow, now: Int64) -> JSONValue {
        [
            "latitude": .number(r.latitude), "longitude": .number(r.longitude), "heading": number(r.heading), "speed_mps": number(r.speedMps),
            "server_timestamp": time(r.receivedAt), "age_seconds": .number(Double(max(0, now - r.receivedAt) / 100) / 10),
        ]
    }

    static func eta(_ eta: ETAEstimator.ETA?, at: Int64) -> JSONValue {
        guard let eta else { return .null }
        return ["seconds": integer(eta.seconds), "confidence": .string(eta.confidence), "computed_at": time(at)]
    }

    public static func locationRow(_ r: TripLocationRow, full: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "latitude": .number(r.latitude), "longitude": .number(r.longitude), "heading": number(r.heading), "speed_mps": number(r.speedMps),
            "received_at": time(r.receivedAt), "ordinal": integer(r.ordinal), "shared": .bool(r.shared != 0),
        ]
        if full {
            object["sequence"] = r.sequence.map { .number(Double($0)) } ?? .null
            object["accuracy_meters"] = number(r.accuracyM)
            object["altitude_meters"] = number(r.altitudeM)
            object["battery_percent"] = number(r.batteryPercent)
            object["is_charging"] = r.isCharging.map { .bool($0 != 0) } ?? .null
            object["client_timestamp"] = time(r.clientAt)
            object["warning"] = text(r.warning)
        }
        return .object(object)
    }

    public static func vehicle(_ v: VehicleRecord) -> JSONValue {
        [
            "driver_id": .string(v.driverID), "make": .string(v.make), "model": .string(v.model), "color": .string(v.color),
            "license_plate": .string(v.licensePlate), "capacity": integer(v.capacity), "ride_types": .array(v.rideTypeList.map(JSONValue.string)),
            "updated_at": time(v.updatedAt),
        ]
    }
}
