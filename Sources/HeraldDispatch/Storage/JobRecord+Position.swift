import HeraldGeo

extension JobRecord {
    /// The job's site, or nil for a job booked without coordinates (offered to every driver).
    var point: GeoPoint? {
        latitude.flatMap { lat in longitude.flatMap { GeoPoint.validated(latitude: lat, longitude: $0) } }
    }
}
