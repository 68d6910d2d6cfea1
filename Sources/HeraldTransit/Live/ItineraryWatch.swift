import HeraldCore
import HeraldGTFS

/// What a client following `itinerary:{id}` is told: each ride at its predicted times, and
/// what breaks the plan — a cancelled run, a skipped stop, a connection missed (less time
/// between arriving and leaving than the change or the walk needs) or at risk (less than two
/// minutes to spare) — with up to two new itineraries from where the rider will be to the
/// last stop of the plan.
public enum ItineraryWatch {
    public static let prefix = "itinerary:"
    /// A connection with less slack than this is at risk.
    public static let riskSeconds: Int64 = 120

    public static func room(_ id: String) -> String { prefix + id }

    /// The status of an itinerary: `expired` when its feed version is no longer served.
    public static func status(_ text: String, snapshot: TransitSnapshot, planner settings: TransitConfig.PlannerConfig) async -> JSONValue {
        guard let id = ItineraryID(text), let feed = id.feed(in: snapshot), let planner = feed.planner else {
            return ["itinerary_id": .string(text), "status": "expired", "legs": [], "problems": [], "replan": []]
        }
        let timetable = feed.timetable
        let times = timetable.feed.stopTimes
        let zone = timetable.zone
        struct Leg {
            var departure: Int64
            var arrival: Int64
            var delayed: Bool
        }
        var legs: [Leg] = []
        var legJSON: [JSONValue] = []
        var problems: [JSONValue] = []
        for (index, ride) in id.rides.enumerated() {
            let dayStart = zone.serviceDayStart(ride.day) + Int64(ride.shift)
            let prediction = feed.overlay.predictions[TripInstance(trip: ride.trip, day: ride.day, shift: ride.shift)]
            let boarding = prediction?.prediction(at: ride.board)
            let alighting = prediction?.prediction(at: ride.alight)
            let scheduledDeparture = dayStart + Int64(times.departure[Int(ride.board)])
            let scheduledArrival = dayStart + Int64(times.arrival[Int(ride.alight)])
            let departure = scheduledDeparture + Int64(boarding?.departureDelay ?? 0)
            let arrival = scheduledArrival + Int64(alighting?.arrivalDelay ?? 0)
            let cancelled = prediction?.canceled == true
            if cancelled {
                problems.append(["leg": .number(Double(index)), "kind": "cancelled"])
            } else if boarding?.cancelled == true || alighting?.cancelled == true {
                problems.append(["leg": .number(Double(index)), "kind": "stop_skipped"])
            }
            legs.append(Leg(departure: departure, arrival: arrival, delayed: departure != scheduledDeparture || arrival != scheduledArrival))
            let trip = timetable.feed.trips[Int(ride.trip)]
            legJSON.append([
                "trip_id": .string(trip.id), "route_id": .string(timetable.feed.routes[Int(trip.route)].id),
                "from_stop_id": .string(timetable.feed.stops[Int(times.stop[Int(ride.board)])].id),
                "to_stop_id": .string(timetable.feed.stops[Int(times.stop[Int(ride.alight)])].id),
                "scheduled_departure_time": .string(zone.iso8601(scheduledDeparture)), "departure_time": .string(zone.iso8601(departure)),
                "scheduled_arrival_time": .string(zone.iso8601(scheduledArrival)), "arrival_time": .string(zone.iso8601(arrival)),
                "cancelled": .bool(cancelled),
            ])
            guard index > 0 else { continue }
            // The change: the walk between the stops (or the minimum change at one stop).
            let from = times.stop[Int(id.rides[index - 1].alight)]
            let to = times.stop[Int(ride.board)]
            let walking = planner.network.walking
            let need = Int64(
                from == to ? walking.minimumChangeSeconds : planner.network.footpaths[Int(from)].first { $0.to == to }?.seconds ?? walking.minimumChangeSeconds)
            let slack = departure - legs[index - 1].arrival - need
            if slack < 0 {
                problems.append(["leg": .number(Double(index)), "kind": "connection_missed", "slack_seconds": .number(Double(slack))])
            } else if slack < riskSeconds {
                problems.append(["leg": .number(Double(index)), "kind": "connection_at_risk", "slack_seconds": .number(Double(slack))])
            }
        }
        var replan: [JSONValue] = []
        if let first = problems.first?["leg"]?.doubleValue.map(Int.init) {
            // Where the rider will be: the start, or where the ride before the problem ends,
            // ready to leave once off that vehicle (the minimum change).
            let fromPosition = first == 0 ? id.rides[0].board : id.rides[first - 1].alight
            let at = first == 0 ? legs[0].departure : legs[first - 1].arrival + Int64(planner.network.walking.minimumChangeSeconds)
            let fromStop = timetable.feed.stops[Int(times.stop[Int(fromPosition)])].id
            let toStop = timetable.feed.stops[Int(times.stop[Int(id.rides[id.rides.count - 1].alight)])].id
            let request = TripPlanRequest(
                origin: .stop(id: fromStop), destination: .stop(id: toStop), when: .departAt(at, until: nil),
                maxWalkingMeters: settings.defaultMaxWalkingMeters,
                wheelchairAccessible: false, modes: nil, maxTransfers: settings.maxTransfers, maxItineraries: 2)
            if fromStop != toStop,
                case .found(let origin) = PlaceEnd.resolve(
                    request.origin, feed: feed, network: planner.network, maxWalkingMeters: request.maxWalkingMeters, fallbackName: "Origin"),
                case .found(let destination) = PlaceEnd.resolve(
                    request.destination, feed: feed, network: planner.network, maxWalkingMeters: request.maxWalkingMeters, fallbackName: "Destination")
            {
                let planning = ItineraryPlanner(
                    feed: feed, planner: planner, request: request, origin: origin, destination: destination,
                    windowSeconds: Int64(settings.maxWindowMinutes) * 60)
                // On the caller's thread: at most one replan per itinerary whose own rides changed.
                let journeys = (try? await planning.itineraries(maxSearches: settings.maxSearchesPerPlan) { planner.plan($0) }) ?? []
                replan = journeys.filter { $0.rides > 0 }.prefix(2).map {
                    ItineraryJSON.itinerary($0, feed: feed, origin: origin, destination: destination, walking: planner.network.walking)
                }
            }
        }
        let status = !problems.isEmpty ? "disrupted" : (legs.contains(where: \.delayed) ? "delayed" : "on_time")
        return [
            "itinerary_id": .string(text), "status": .string(status), "legs": .array(legJSON), "problems": .array(problems), "replan": .array(replan),
        ]
    }
}
