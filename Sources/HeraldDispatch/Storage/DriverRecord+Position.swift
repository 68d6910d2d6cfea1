import HeraldGeo

extension DriverRecord {
    /// The last position written to the database (the live index may know a newer one).
    var point: GeoPoint? {
        latitude.flatMap { lat in longitude.flatMap { GeoPoint.validated(latitude: lat, longitude: $0) } }
    }
}
