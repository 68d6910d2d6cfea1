import HeraldGeo

/// The reference `nearest`: every driver's stored position, exact haversine, full sort.
enum BruteForce {
    static func nearest(
        _ grid: DriverGrid, to center: GeoPoint, radiusMeters: Double, limit: Int, freshSince: Int64? = nil
    ) -> [DriverMatch] {
        var matches: [DriverMatch] = []
        for id in grid.driverIDs {
            guard let (point, time) = grid.position(of: id) else { continue }
            if let freshSince, time < freshSince { continue }
            let distance = Haversine.distanceMeters(center, point)
            if distance <= radiusMeters { matches.append(DriverMatch(driverID: id, distanceMeters: distance)) }
        }
        matches.sort { $0.distanceMeters < $1.distanceMeters || ($0.distanceMeters == $1.distanceMeters && $0.driverID < $1.driverID) }
        return Array(matches.prefix(limit))
    }
}
