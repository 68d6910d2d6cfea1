import HeraldGeo

/// Where to board near a point: each station once, with its platforms inside, and each stop
/// that belongs to no station, nearest first.
///
/// Why grouped: the grid finds platforms and stations alike, so a five-platform station
/// filled a four-stop answer with itself and hid the bus stop across the road. A rider
/// picks a place first and a platform second; the answer is shaped the same way. A station
/// is as near as its nearest member (itself or a platform), and lists all its platforms
/// with their distances, also those just outside the radius: they are the same place.
public struct NearbyPlaces: Sendable {
    public struct Member: Sendable, Equatable {
        public var stop: Int32
        public var meters: Double
    }

    public struct Place: Sendable, Equatable {
        public var stop: Int32
        public var meters: Double
        /// A station's platforms, nearest first; empty for a stop outside any station.
        public var platforms: [Member]
    }

    public static func find(in timetable: Timetable, latitude: Double, longitude: Double, radiusMeters: Double, limit: Int) -> [Place] {
        let stops = timetable.feed.stops
        var placeIndex: [Int32: Int] = [:]
        var places: [Place] = []
        for hit in timetable.grid.nearby(latitude: latitude, longitude: longitude, radiusMeters: radiusMeters, limit: .max) {
            let stop = stops[Int(hit.stop)]
            let place = stop.locationType == .stop && stop.parent >= 0 && stops[Int(stop.parent)].locationType == .station ? stop.parent : hit.stop
            guard placeIndex[place] == nil else { continue }
            placeIndex[place] = places.count
            places.append(Place(stop: place, meters: hit.meters, platforms: []))
            if places.count == limit { break }
        }
        let center = GeoPoint(latitude: latitude, longitude: longitude)
        for index in places.indices where stops[Int(places[index].stop)].locationType == .station {
            places[index].platforms = (timetable.childrenByStop[places[index].stop] ?? [])
                .filter { stops[Int($0)].locationType == .stop }
                .map { platform in
                    let stop = stops[Int(platform)]
                    let meters = stop.latitude.flatMap { lat in stop.longitude.map { Haversine.distanceMeters(center, GeoPoint(latitude: lat, longitude: $0)) }
                    }
                    return Member(stop: platform, meters: meters ?? .infinity)
                }
                .sorted { ($0.meters, $0.stop) < ($1.meters, $1.stop) }
        }
        return places
    }
}
