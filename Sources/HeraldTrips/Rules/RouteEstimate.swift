import Foundation
import HeraldGeo

/// A route's distance and duration without a routing engine: the straight line times a
/// detour factor, at an average city speed. The polyline is the straight segment (Google's
/// encoded polyline format), so a client can draw something until it asks a real router.
public struct RouteEstimate: Sendable, Equatable {
    public var distanceMeters: Double
    public var durationSeconds: Double
    public var polyline: String

    public init(from: GeoPoint, to: GeoPoint, detourFactor: Double, speedMps: Double) {
        distanceMeters = Haversine.distanceMeters(from, to) * detourFactor
        durationSeconds = distanceMeters / speedMps
        polyline = Polyline.encode([from, to])
    }
}
