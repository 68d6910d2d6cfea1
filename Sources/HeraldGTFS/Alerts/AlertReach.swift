/// The stops a service alert touches in one timetable, and through which routes.
///
/// Why stops: a rider's favourites are stops, so every informed entity (a stop, a route, a
/// trip, an agency, a route type, or a combination of them) is turned into the stops it
/// affects, and users are found from there. Why the routes are kept: a rider who muted a
/// route (MUTE_24H on an alert about it) must not hear about that route again through the
/// stops it serves, while an alert naming the stop itself still reaches them.
///
/// GTFS-Realtime's rule for an `EntitySelector` is that its fields narrow each other (route
/// 10 at stop 6121 is about stop 6121 for route 10 only); the alert is about the union of
/// its selectors. A stop is widened to its station and the station's platforms, so a
/// favourite of the station hears about a platform and the other way round.
public struct AlertReach: Sendable, Equatable {
    /// How an alert reaches one stop.
    public enum Via: Sendable, Equatable {
        /// The alert names the stop (or its station or platform) without a route.
        case direct
        /// Only through these routes (route ids, sorted).
        case routes([String])
    }

    /// Stop id → how the alert reaches it.
    public private(set) var stops: [String: Via] = [:]

    public init() {}

    public init(entities: [RealtimeAlert.InformedEntity], timetable t: Timetable) {
        for entity in entities { add(entity, t) }
    }

    public var isEmpty: Bool { stops.isEmpty }

    /// Every route id the alert reaches stops through (for the push's `route_id`).
    public var routeIDs: [String] {
        var routes: Set<String> = []
        for via in stops.values { if case .routes(let ids) = via { routes.formUnion(ids) } }
        return routes.sorted()
    }

    /// Adds what another timetable's reach found (an alert read against every feed).
    public mutating func merge(_ other: AlertReach) {
        for (stop, via) in other.stops { combine(stop, via) }
    }

    mutating func add(_ entity: RealtimeAlert.InformedEntity, _ t: Timetable) {
        let feed = t.feed
        // The routes the selector allows (nil: any route).
        var routes: Set<Int32>?
        func narrow(_ allowed: Set<Int32>) { routes = routes.map { $0.intersection(allowed) } ?? allowed }
        if let id = entity.routeID ?? entity.trip?.routeID {
            narrow(t.routesByID[id].map { [$0] } ?? [])
        }
        if let type = entity.routeType {
            narrow(Set(feed.routes.indices.filter { feed.routes[$0].type == type }.map(Int32.init)))
        }
        if let agency = entity.agencyID {
            // A feed with one agency may leave routes.agency_id empty.
            let single = feed.agencies.count == 1 && feed.agencies[0].id == agency
            narrow(Set(feed.routes.indices.filter { feed.routes[$0].agencyID == agency || (single && feed.routes[$0].agencyID == nil) }.map(Int32.init)))
        }
        // The stops the selector allows (nil: any stop the routes serve).
        var stops: Set<Int32>?
        if let tripID = entity.trip?.tripID {
            guard let trip = t.tripsByID[tripID] else { return }
            narrow([feed.trips[Int(trip)].route])
            stops = widen(Set(feed.stopTimes.range(trip: trip).map { feed.stopTimes.stop[$0] }), t)
        }
        if let id = entity.stopID {
            guard let stop = t.stopsByID[id] else { return }
            let named = widen([stop], t)
            stops = stops.map { $0.intersection(named) } ?? named
        }
        let direction = entity.directionID.map(Int8.init(clamping:))
        switch (stops, routes) {
        case (nil, nil):
            return
        case (let stops?, nil):
            for stop in stops { mark(stop, .direct, t) }
        case (let stops?, let routes?):
            // The named stops, through the routes of the selector that serve them.
            for stop in stops {
                let serving = routes.intersection(t.routesByStop[Int(stop)])
                if !serving.isEmpty { mark(stop, .routes(serving.map { feed.routes[Int($0)].id }.sorted()), t) }
            }
        case (nil, let routes?):
            // Every stop the routes serve (in one direction when it is given), with its station.
            for route in routes {
                let via = Via.routes([feed.routes[Int(route)].id])
                var served: Set<Int32> = []
                for trip in t.tripsByRoute[Int(route)] where direction == nil || feed.trips[Int(trip)].directionID == direction {
                    for position in feed.stopTimes.range(trip: trip) { served.insert(feed.stopTimes.stop[position]) }
                }
                for stop in served {
                    mark(stop, via, t)
                    let parent = feed.stops[Int(stop)].parent
                    if parent >= 0 { mark(parent, via, t) }
                }
            }
        }
    }

    /// A stop with its station and the station's platforms.
    func widen(_ stops: Set<Int32>, _ t: Timetable) -> Set<Int32> {
        var result = stops
        for stop in stops {
            let parent = t.feed.stops[Int(stop)].parent
            if parent >= 0 { result.insert(parent) }
            for child in t.childrenByStop[stop] ?? [] { result.insert(child) }
        }
        return result
    }

    mutating func mark(_ stop: Int32, _ via: Via, _ t: Timetable) {
        combine(t.feed.stops[Int(stop)].id, via)
    }

    /// Direct wins over routes; routes add up.
    mutating func combine(_ id: String, _ via: Via) {
        switch (stops[id], via) {
        case (.direct?, _): return
        case (_, .direct), (nil, _): stops[id] = via
        case (.routes(let old)?, .routes(let new)): stops[id] = .routes(Array(Set(old).union(new)).sorted())
        }
    }
}
