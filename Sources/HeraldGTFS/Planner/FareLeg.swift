/// One ride of an itinerary as GTFS Fares v2 sees it: its route (for the route's network),
/// where it boards and alights (for areas, and for fare leg join rules) and when (for
/// timeframes and transfer duration limits).
public struct FareLeg: Sendable, Equatable {
    public var routeID: String
    /// The boarding stop's id, then those of the stops it is part of, nearest first (a
    /// boarding area's platform, a platform's station). Never empty.
    public var boarding: [String]
    /// The alighting stop's id and its parents, likewise.
    public var alighting: [String]
    /// The scheduled departure from the boarding stop and arrival at the alighting stop, epoch seconds.
    public var departure: Int64
    public var arrival: Int64

    public init(routeID: String, boarding: [String], alighting: [String], departure: Int64, arrival: Int64) {
        self.routeID = routeID
        self.boarding = boarding
        self.alighting = alighting
        self.departure = departure
        self.arrival = arrival
    }

    /// A planned ride, with the scheduled times of the run it rides (fares go by the
    /// timetable, not by a delay).
    public init(ride: Journey.Ride, timetable: Timetable) {
        let feed = timetable.feed
        let times = feed.stopTimes
        let trip = feed.trips[Int(ride.trip)]
        self.init(
            routeID: feed.routes[Int(trip.route)].id, boarding: Self.stopAndParents(times.stop[ride.board], feed: feed),
            alighting: Self.stopAndParents(times.stop[ride.alight], feed: feed),
            departure: timetable.instant(day: ride.day, seconds: times.departure[ride.board], shift: ride.shift),
            arrival: timetable.instant(day: ride.day, seconds: times.arrival[ride.alight], shift: ride.shift))
    }

    /// A stop's id and its parents' (at most two: boarding area → platform → station).
    static func stopAndParents(_ stop: Int32, feed: TransitFeed) -> [String] {
        var ids: [String] = []
        var current = stop
        while current >= 0 && Int(current) < feed.stops.count && ids.count < 3 {
            let record = feed.stops[Int(current)]
            ids.append(record.id)
            current = record.parent
        }
        return ids
    }

    /// The station the leg boards at (the outermost parent), or the stop itself.
    var boardingStation: String { boarding.last ?? "" }
    var alightingStation: String { alighting.last ?? "" }
}
