/// A position on the WGS 84 sphere in degrees.
///
/// Plain `Double`s so callers can build one from whatever their wire format decodes. The
/// grid treats an invalid position passed to `upsert` as a programming error, so request
/// handlers go through `validated` and turn bad client input into an error response.
public struct GeoPoint: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// nil unless both are finite, latitude in -90...90, longitude in -180...180
    public static func validated(latitude: Double, longitude: Double) -> GeoPoint? {
        let point = GeoPoint(latitude: latitude, longitude: longitude)
        return point.isValid ? point : nil
    }

    /// Whether `validated` would accept this point (NaN fails every comparison, so it fails here).
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite
            && latitude >= -90 && latitude <= 90
            && longitude >= -180 && longitude <= 180
    }
}
