import HeraldGTFS
import HeraldGeo

/// The itineraries of one trip plan request on one feed: the planner's journeys turned into
/// what a rider chooses from.
///
/// - `depart_at`: the Pareto set (arrival, rides) leaving then, followed by the next
///   departures (each search leaves one second after the earliest option found so far)
///   until `max_itineraries` are found.
/// - `depart_at` … `depart_until`: every journey no other leaves later, arrives earlier and
///   changes less (range RAPTOR's answer, found one departure at a time).
/// - `arrive_by`: the latest departure that still arrives in time (a search over departure
///   times, which is exact because the earliest arrival never decreases with a later
///   departure), with its Pareto set.
///
/// A walk to the first stop is moved to end when the first vehicle leaves (nobody waits at
/// home); a walk the whole way is offered first when it is within the walking distance, and
/// counts among the `max_itineraries`.
public struct ItineraryPlanner: Sendable {
    public let feed: LoadedFeed
    public let planner: JourneyPlanner
    public let request: TripPlanRequest
    public let origin: PlaceEnd
    public let destination: PlaceEnd
    public let windowSeconds: Int64

    public init(feed: LoadedFeed, planner: JourneyPlanner, request: TripPlanRequest, origin: PlaceEnd, destination: PlaceEnd, windowSeconds: Int64) {
        self.feed = feed
        self.planner = planner
        self.request = request
        self.origin = origin
        self.destination = destination
        self.windowSeconds = windowSeconds
    }

    /// The routes the request's modes allow (nil: all).
    var routes: Set<Int32>? {
        guard let modes = request.modes else { return nil }
        var allowed: Set<Int32> = []
        for (index, route) in feed.timetable.feed.routes.enumerated() where TransitMode(routeType: route.type).map(modes.contains) == true {
            allowed.insert(Int32(index))
        }
        return allowed
    }

    /// The itineraries, best first: by arrival (by departure for a range); empty when none exists.
    ///
    /// `run` performs each RAPTOR search (the server's `PlannerPool`, which schedules searches
    /// fairly between callers); at most `maxSearches` run (a departure window is covered
    /// from its start as far as they reach: the per-request work budget).
    public func itineraries(maxSearches: Int = .max, search run: (JourneyQuery) async throws -> [Journey]) async throws -> [Journey] {
        let allowed = routes
        var budget = maxSearches
        /// The journeys leaving at `time`; nil once the budget is spent.
        func search(_ time: Int64) async throws -> [Journey]? {
            guard budget > 0 else { return nil }
            budget -= 1
            var query = JourneyQuery(origins: origin.stops, destinations: destination.stops, departAt: time)
            query.maxTransfers = request.maxTransfers
            query.wheelchairOnly = request.wheelchairAccessible
            query.routes = allowed
            query.realtime = feed.overlay
            return try await run(query).filter { $0.rides > 0 }.map(Self.leavingLate)
        }
        let wanted = request.maxItineraries
        var found: [Journey] = []
        switch request.when {
        case .departAt(let start, .none):
            var seen = Set<[RideKey]>()
            var time = start
            for _ in 0..<(wanted + 3) {
                guard let journeys = try await search(time), let earliest = journeys.map(\.departure).min() else { break }
                for journey in journeys where seen.insert(Self.key(journey)).inserted { found.append(journey) }
                if found.count >= wanted { break }
                time = earliest + 1
            }
            found.sort { ($0.arrival, $0.rides, $0.departure) < ($1.arrival, $1.rides, $1.departure) }
            found = Array(found.prefix(wanted))
            if let walk = walkAlone(leaving: start) { found = Array(([walk] + found).prefix(wanted)) }
        case .departAt(let start, let until?):
            var seen = Set<[RideKey]>()
            var time = start
            for _ in 0..<200 where time <= until {
                guard let journeys = try await search(time)?.filter({ $0.departure <= until }), let earliest = journeys.map(\.departure).min() else { break }
                for journey in journeys where seen.insert(Self.key(journey)).inserted { found.append(journey) }
                time = earliest + 1
            }
            found = found.filter { candidate in
                !found.contains { other in
                    other != candidate && other.departure >= candidate.departure && other.arrival <= candidate.arrival && other.rides <= candidate.rides
                        && (other.departure > candidate.departure || other.arrival < candidate.arrival || other.rides < candidate.rides)
                }
            }
            found.sort { ($0.departure, $0.arrival, $0.rides) < ($1.departure, $1.arrival, $1.rides) }
            found = Array(found.prefix(wanted))
            if let walk = walkAlone(leaving: start) { found = Array(([walk] + found).prefix(wanted)) }
        case .arriveBy(let deadline):
            func arriving(_ time: Int64) async throws -> [Journey]? { try await search(time)?.filter { $0.arrival <= deadline } }
            var low = deadline - windowSeconds
            var best = try await arriving(low) ?? []
            guard let first = best.map(\.departure).max() else {
                return walkAlone(arriving: deadline).map { [$0] } ?? []
            }
            // f(t), the earliest arrival leaving at t, never decreases: search the latest t
            // with f(t) ≤ deadline, jumping to the departure each success found.
            low = first
            var high = deadline + 1
            while high - low > 1 {
                let middle = low + (high - low) / 2
                guard let journeys = try await arriving(middle) else { break }
                if let departure = journeys.map(\.departure).max() {
                    low = departure
                    best = journeys
                } else {
                    high = middle
                }
            }
            // Latest departure first, then fewer rides.
            found = Array(best.sorted { ($1.departure, $0.rides) < ($0.departure, $1.rides) }.prefix(wanted))
            if let walk = walkAlone(arriving: deadline) { found = Array(([walk] + found).prefix(wanted)) }
        }
        return found
    }

    struct RideKey: Hashable {
        let trip: Int32
        let day: Int32
        let shift: Int32
        let board: Int
        let alight: Int
    }

    static func key(_ journey: Journey) -> [RideKey] {
        journey.legs.compactMap { $0.ride.map { RideKey(trip: $0.trip, day: $0.day, shift: $0.shift, board: $0.board, alight: $0.alight) } }
    }

    /// The journey with its walks before the first ride moved to end as that ride leaves.
    static func leavingLate(_ journey: Journey) -> Journey {
        guard let first = journey.legs.firstIndex(where: { $0.ride != nil }), first > 0, let ride = journey.legs[first].ride else { return journey }
        let shift = ride.departure - journey.legs[first - 1].arrival
        guard shift > 0 else { return journey }
        var legs = journey.legs
        for index in 0..<first {
            if case .walk(let from, let to, let departure, let arrival) = legs[index] {
                legs[index] = .walk(from: from, to: to, departure: departure + shift, arrival: arrival + shift)
            }
        }
        return Journey(legs: legs)
    }

    /// Seconds and metres of walking from the origin to the destination, when both are
    /// places and it is within the walking distance.
    var directWalk: (seconds: Int64, meters: Double)? {
        guard let from = origin.point, let to = destination.point else { return nil }
        let meters = Haversine.distanceMeters(from, to) * planner.network.walking.detourFactor
        guard meters <= Double(request.maxWalkingMeters) else { return nil }
        return (Int64(planner.network.walking.seconds(meters: Haversine.distanceMeters(from, to))), meters)
    }

    func walkAlone(leaving time: Int64) -> Journey? {
        directWalk.map { Journey(legs: [.walk(from: nil, to: nil, departure: time, arrival: time + $0.seconds)]) }
    }

    func walkAlone(arriving time: Int64) -> Journey? {
        directWalk.map { Journey(legs: [.walk(from: nil, to: nil, departure: time - $0.seconds, arrival: time)]) }
    }
}
