/// Great-circle distances on a sphere of Redis's radius.
///
/// Redis's GEO commands use the same haversine formula and radius, so a distance computed
/// here can be compared with one from `GEOSEARCH … WITHDIST` to well under a metre.
public enum Haversine {
    /// Redis's `EARTH_RADIUS_IN_METERS` (geohash_helper.c).
    public static let earthRadiusMeters: Double = 6_372_797.560856

    /// The grid computes its distances with the same code, so for any stored position `p`,
    /// `distanceMeters(center, p)` equals the distance `DriverGrid.nearest` reports, bit for bit.
    public static func distanceMeters(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let kernel = HaversineKernel(center: a)
        return HaversineKernel.distanceMeters(
            haversine: kernel.haversine(latitudeDegrees: b.latitude, longitudeDegrees: b.longitude))
    }
}
