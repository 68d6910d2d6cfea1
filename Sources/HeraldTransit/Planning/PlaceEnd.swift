import HeraldGTFS
import HeraldGeo

/// One end of a trip plan resolved against a feed: the stops reachable on foot with the
/// walk to each, and where and what the place is (for the answer's walk legs).
public struct PlaceEnd: Sendable {
    public var stops: [(stop: Int32, walkSeconds: Int32)]
    public var point: GeoPoint?
    public var name: String
    /// The stop the request named (nil for coordinates).
    public var stop: Int32?

    public enum Resolution: Sendable {
        case found(PlaceEnd)
        /// The feed has no stop with the id.
        case unknownStop
        /// No stop a trip serves is within walking distance.
        case outOfReach
    }

    /// A stop id is the stop (a station: its platforms, no walk); coordinates are every
    /// served stop within `maxWalkingMeters` of walking (straight line × the detour factor).
    public static func resolve(_ place: TripPlanRequest.Place, feed: LoadedFeed, network: TransitNetwork, maxWalkingMeters: Int, fallbackName: String)
        -> Resolution
    {
        let timetable = feed.timetable
        switch place {
        case .stop(let id):
            guard let stop = timetable.stopsByID[id] else { return .unknownStop }
            let record = timetable.feed.stops[Int(stop)]
            let served = ([stop] + (timetable.childrenByStop[stop] ?? [])).filter(network.serves)
            let point = record.latitude.flatMap { latitude in record.longitude.map { GeoPoint(latitude: latitude, longitude: $0) } }
            return .found(PlaceEnd(stops: served.map { ($0, 0) }, point: point, name: record.name ?? id, stop: stop))
        case .coordinates(let latitude, let longitude, let name):
            let radius = Double(maxWalkingMeters) / network.walking.detourFactor
            let near = timetable.grid.nearby(latitude: latitude, longitude: longitude, radiusMeters: radius, limit: 400).filter { network.serves($0.stop) }
            guard !near.isEmpty else { return .outOfReach }
            return .found(
                PlaceEnd(
                    stops: near.map { ($0.stop, network.walking.seconds(meters: $0.meters)) }, point: GeoPoint(latitude: latitude, longitude: longitude),
                    name: name ?? fallbackName, stop: nil))
        }
    }
}
