import HeraldCore
import HeraldGTFS
import HeraldGeo

/// The transit API contract's itinerary shape: legs on foot (`WALK`) and on board (`BUS`,
/// `RAIL`, …) with their stops and times in the agency's zone. Beyond that contract, each
/// time on board comes with its schedule and delay, and every leg with its start and end
/// times and duration in seconds. Polylines follow the stops (Herald serves no `shapes.txt`); a walk's
/// is the straight line.
public enum ItineraryJSON {
    public static func itinerary(_ journey: Journey, feed: LoadedFeed, origin: PlaceEnd, destination: PlaceEnd, walking: WalkingRules) -> JSONValue {
        let zone = feed.timetable.zone
        var legs: [JSONValue] = []
        var walkingMeters = 0.0
        var realtime = false
        var accessible = true
        // GTFS Fares v2 where the feed has fare leg rules, else fares v1 (null without fares,
        // or when some ride has none).
        let priced = price(journey.legs.compactMap(\.ride), feed: feed)
        var rideIndex = 0
        for leg in journey.legs {
            switch leg {
            case .walk(let from, let to, let departure, let arrival):
                let start = end(from, place: origin, feed)
                let finish = end(to, place: destination, feed)
                var meters = 0.0
                if let a = start.point, let b = finish.point { meters = Haversine.distanceMeters(a, b) * walking.detourFactor }
                walkingMeters += meters
                legs.append(
                    [
                        "mode": "WALK", "duration_minutes": minutes(arrival - departure), "duration_seconds": .number(Double(arrival - departure)),
                        "distance_meters": .number(meters.rounded()), "from": start.json, "to": finish.json,
                        "departure_time": .string(zone.iso8601(departure)), "arrival_time": .string(zone.iso8601(arrival)),
                        "polyline": .string(Polyline.encode([start.point, finish.point].compactMap { $0 })),
                    ])
            case .ride(let ride):
                var products: JSONValue?
                if let all = priced.products, rideIndex < all.count { products = all[rideIndex] }
                rideIndex += 1
                let (json, predicted, wheelchair) = rideLeg(ride, feed: feed, fareProducts: products)
                legs.append(json)
                realtime = realtime || predicted
                accessible = accessible && wheelchair
            }
        }
        // Followable on `itinerary:{id}` (ItineraryWatch) when it rides at all.
        let itineraryID = ItineraryID(version: feed.version.id, journey: journey)
        let id = journey.rides > 0 && journey.rides <= 5 && itineraryID.fitsAChannel ? itineraryID.text : nil
        return [
            "itinerary_id": id.map(JSONValue.string) ?? .null,
            "duration_minutes": minutes(journey.arrival - journey.departure), "duration_seconds": .number(Double(journey.arrival - journey.departure)),
            "walking_distance_meters": .number(walkingMeters.rounded()), "transfers": .number(Double(journey.transfers)),
            "fare_cents": priced.total.map { .number(Double($0.minor)) } ?? .null, "fare_currency": priced.total.map { .string($0.currency) } ?? .null,
            "departure_time": .string(zone.iso8601(journey.departure)), "arrival_time": .string(zone.iso8601(journey.arrival)),
            "legs": .array(legs), "realtime_data_available": .bool(realtime), "wheelchair_accessible": .bool(accessible),
        ]
    }

    /// An itinerary's fare: the total, and with Fares v2 the products charged on each ride.
    struct PricedFare {
        var total: (minor: Int, currency: String)?
        /// Per ride (in order), its `fare_products` array; nil with fares v1.
        var products: [JSONValue]?
    }

    static func price(_ rides: [Journey.Ride], feed: LoadedFeed) -> PricedFare {
        guard !feed.faresV2.isEmpty else {
            return PricedFare(total: feed.fares.fare(rides.map { fareRide($0, feed: feed) }), products: nil)
        }
        let quote = feed.faresV2.quote(rides.map { FareLeg(ride: $0, timetable: feed.timetable) })
        var products = [[JSONValue]](repeating: [], count: rides.count)
        for charge in quote?.charges ?? [] where products.indices.contains(charge.leg) {
            let product: JSONValue = [
                "fare_product_id": .string(charge.productID), "fare_product_name": TransitJSON.text(charge.productName),
                "amount_cents": .number(Double(charge.minor)), "currency": .string(charge.currency), "fare_media_id": TransitJSON.text(charge.fareMediaID),
                "transfer": .bool(charge.isTransfer),
            ]
            products[charge.leg].append(product)
        }
        let total: (minor: Int, currency: String)? = quote.map { (minor: $0.minor, currency: $0.currency) }
        return PricedFare(total: total, products: products.map { JSONValue.array($0) })
    }

    static func fareRide(_ ride: Journey.Ride, feed: LoadedFeed) -> FareTable.Ride {
        let timetable = feed.timetable
        let stops = timetable.feed.stopTimes.stop
        let trip = timetable.feed.trips[Int(ride.trip)]
        let zones = (ride.board...ride.alight).compactMap { timetable.feed.stops[Int(stops[$0])].zoneID }
        return FareTable.Ride(
            routeID: timetable.feed.routes[Int(trip.route)].id, originZone: timetable.feed.stops[Int(stops[ride.board])].zoneID,
            destinationZone: timetable.feed.stops[Int(stops[ride.alight])].zoneID, zones: Set(zones), departure: ride.departure)
    }

    static func minutes(_ seconds: Int64) -> JSONValue { .number(Double((seconds + 59) / 60)) }

    static func point(_ feed: LoadedFeed, _ stop: Int32) -> GeoPoint? {
        let record = feed.timetable.feed.stops[Int(stop)]
        guard let latitude = record.latitude, let longitude = record.longitude else { return nil }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }

    /// A walk's end: a stop, or the request's place.
    static func end(_ stop: Int32?, place: PlaceEnd, _ feed: LoadedFeed) -> (json: JSONValue, point: GeoPoint?) {
        if let stop {
            let record = feed.timetable.feed.stops[Int(stop)]
            let at = point(feed, stop)
            return (
                [
                    "name": TransitJSON.text(record.name), "stop_id": .string(record.id), "stop_name": TransitJSON.text(record.name),
                    "lat": TransitJSON.number(at?.latitude), "lon": TransitJSON.number(at?.longitude), "platform": TransitJSON.text(record.platformCode),
                ], at
            )
        }
        var json: [String: JSONValue] = [
            "name": .string(place.name), "lat": TransitJSON.number(place.point?.latitude), "lon": TransitJSON.number(place.point?.longitude),
        ]
        if let named = place.stop { json["stop_id"] = .string(feed.timetable.feed.stops[Int(named)].id) }
        return (.object(json), place.point)
    }

    /// A ride: its route, trip and stops, with predicted times where the realtime data has them.
    /// `fareProducts`: the GTFS Fares v2 products charged on this ride (omitted with fares v1).
    static func rideLeg(_ ride: Journey.Ride, feed: LoadedFeed, fareProducts: JSONValue? = nil) -> (JSONValue, realtime: Bool, wheelchair: Bool) {
        let timetable = feed.timetable
        let times = timetable.feed.stopTimes
        let trip = timetable.feed.trips[Int(ride.trip)]
        let route = timetable.feed.routes[Int(trip.route)]
        let zone = timetable.zone
        let dayStart = zone.serviceDayStart(ride.day) + Int64(ride.shift)
        let prediction = feed.overlay.predictions[TripInstance(trip: ride.trip, day: ride.day, shift: ride.shift)]
        func stopJSON(_ position: Int, arrival: Bool, departure: Bool) -> JSONValue {
            let stop = times.stop[position]
            let record = timetable.feed.stops[Int(stop)]
            let at = point(feed, stop)
            var json: [String: JSONValue] = [
                "stop_id": .string(record.id), "stop_name": TransitJSON.text(record.name), "lat": TransitJSON.number(at?.latitude),
                "lon": TransitJSON.number(at?.longitude), "platform": TransitJSON.text(record.platformCode),
            ]
            let predicted = prediction?.prediction(at: Int32(position))
            if arrival {
                let scheduled = dayStart + Int64(times.arrival[position])
                let delay = predicted?.arrivalDelay
                json["arrival_time"] = .string(zone.iso8601(scheduled + Int64(delay ?? 0)))
                json["scheduled_arrival_time"] = .string(zone.iso8601(scheduled))
                json["arrival_delay_seconds"] = delay.map { .number(Double($0)) } ?? .null
            }
            if departure {
                let scheduled = dayStart + Int64(times.departure[position])
                let delay = predicted?.departureDelay
                json["departure_time"] = .string(zone.iso8601(scheduled + Int64(delay ?? 0)))
                json["scheduled_departure_time"] = .string(zone.iso8601(scheduled))
                json["departure_delay_seconds"] = delay.map { .number(Double($0)) } ?? .null
            }
            if predicted?.cancelled == true { json["skipped"] = true }
            return .object(json)
        }
        let between = (ride.board + 1)..<ride.alight
        let points = (ride.board...ride.alight).compactMap { point(feed, times.stop[$0]) }
        let meters = zip(points, points.dropFirst()).reduce(0.0) { $0 + Haversine.distanceMeters($1.0, $1.1) }
        let accessible = trip.wheelchairAccessible == 1
        var json: [String: JSONValue] = [
            "mode": .string(TransitMode(routeType: route.type)?.legMode ?? "TRANSIT"), "route_id": .string(route.id),
            "route_short_name": TransitJSON.text(route.shortName), "route_long_name": TransitJSON.text(route.longName),
            "route_color": TransitJSON.text(route.color), "route_text_color": TransitJSON.text(route.textColor),
            "trip_id": .string(trip.id), "headsign": TransitJSON.text(trip.headsign ?? route.longName),
            "direction_id": trip.directionID >= 0 ? .number(Double(trip.directionID)) : .null,
            "from": stopJSON(ride.board, arrival: false, departure: true), "to": stopJSON(ride.alight, arrival: true, departure: false),
            "departure_time": .string(zone.iso8601(ride.departure)), "arrival_time": .string(zone.iso8601(ride.arrival)),
            "duration_minutes": minutes(ride.arrival - ride.departure), "duration_seconds": .number(Double(ride.arrival - ride.departure)),
            "distance_meters": .number(meters.rounded()), "stops_between": .number(Double(between.count)),
            "intermediate_stops": .array(between.map { stopJSON($0, arrival: true, departure: false) }),
            "polyline": .string(Polyline.encode(points)), "realtime": .bool(prediction != nil), "wheelchair_accessible": .bool(accessible),
        ]
        if let fareProducts { json["fare_products"] = fareProducts }
        return (.object(json), prediction != nil, accessible)
    }
}
