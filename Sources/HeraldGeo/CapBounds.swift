#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The latitude/longitude box around a spherical cap (all points within a distance of a
/// centre): the grid visits only the cells that intersect it.
///
/// Longitudes are *unwrapped*: near the antimeridian `minLongitude` may be below -180 or
/// `maxLongitude` above 180, and the grid maps the overflow onto the columns on the other
/// side. A cap containing a pole spans every longitude. The angular radius is widened by a
/// relative and an absolute margin (≈ 6 mm) so rounding can never drop a point that lies
/// exactly on the circle.
struct CapBounds {
    var minLatitude: Double
    var maxLatitude: Double
    var minLongitude: Double
    var maxLongitude: Double
    var coversAllLongitudes: Bool

    init(center: GeoPoint, radiusMeters: Double) {
        let degreesPerRadian = 180 / Double.pi
        let angle = radiusMeters / Haversine.earthRadiusMeters * (1 + 1e-9) + 1e-9
        let latitude = center.latitude * HaversineKernel.radiansPerDegree
        let low = latitude - angle
        let high = latitude + angle
        if angle >= .pi || low <= -.pi / 2 || high >= .pi / 2 {
            minLatitude = max(-90, low * degreesPerRadian)
            maxLatitude = min(90, high * degreesPerRadian)
            minLongitude = -180
            maxLongitude = 180
            coversAllLongitudes = true
            return
        }
        minLatitude = low * degreesPerRadian
        maxLatitude = high * degreesPerRadian
        // The cap's widest longitude offset (tangent meridians), not the offset at the centre's latitude.
        let ratio = min(1, sin(angle) / cos(latitude))
        let halfWidth = asin(ratio) * degreesPerRadian
        minLongitude = center.longitude - halfWidth
        maxLongitude = center.longitude + halfWidth
        coversAllLongitudes = ratio >= 1 || halfWidth >= 180
    }
}
