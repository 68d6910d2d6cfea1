import Foundation
import HeraldGeo

/// The rideshare design's route-deviation signal: during a ride, a driver far off the expected route
/// (a detour to run up the fare, or a rider taken somewhere else).
///
/// Why a corridor around the straight pickup–dropoff segment: Herald has no routing engine,
/// so the expected route is that segment, and real roads stray from it; the corridor is
/// `route_deviation_meters` wide on each side, or half the trip's length when that is more
/// (a long trip's roads stray further). Flagged once per excursion — leaving the corridor
/// flags the trip for operators (the rider keeps seeing the car), coming back re-arms it.
/// Distances use a local flat projection around the segment, exact enough at city scale.
public struct RouteDeviationCheck: Sendable, Equatable {
    public var pickup: GeoPoint
    public var dropoff: GeoPoint
    public var corridorMeters: Double
    var outside = false

    public init(pickup: GeoPoint, dropoff: GeoPoint, minimumCorridorMeters: Double) {
        self.pickup = pickup
        self.dropoff = dropoff
        corridorMeters = max(minimumCorridorMeters, Haversine.distanceMeters(pickup, dropoff) / 2)
    }

    /// How far `point` is from the pickup–dropoff segment, in metres.
    public func distanceFromRoute(_ point: GeoPoint) -> Double {
        let metersPerDegreeLatitude = 111_226.3
        let metersPerDegreeLongitude = metersPerDegreeLatitude * cos(pickup.latitude * .pi / 180)
        func flat(_ p: GeoPoint) -> (x: Double, y: Double) {
            ((p.longitude - pickup.longitude) * metersPerDegreeLongitude, (p.latitude - pickup.latitude) * metersPerDegreeLatitude)
        }
        let (a, b, p) = (flat(pickup), flat(dropoff), flat(point))
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        let lengthSquared = dx * dx + dy * dy
        let t = lengthSquared == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / lengthSquared))
        let (cx, cy) = (a.x + t * dx, a.y + t * dy)
        return ((p.x - cx) * (p.x - cx) + (p.y - cy) * (p.y - cy)).squareRoot()
    }

    /// Judges a sample taken during the ride: a warning when it leaves the corridor.
    public mutating func check(_ point: GeoPoint) -> LocationFraudCheck.Warning? {
        let off = distanceFromRoute(point)
        defer { outside = off > corridorMeters }
        guard off > corridorMeters, !outside else { return nil }
        return LocationFraudCheck.Warning(
            code: "ROUTE_DEVIATION", action: "NONE", message: "\(Int(off.rounded())) m off the expected route")
    }
}
