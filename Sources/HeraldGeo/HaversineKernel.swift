#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The haversine formula with the centre's trigonometry computed once, for scanning many
/// points against one centre.
///
/// Nearly every pair the index compares is less than a few hundred kilometres apart, so the
/// half-angle sines and cosines are small-argument polynomials (exact to within an ulp for
/// |x| ≤ 0.04 rad) and the point's cos(latitude) comes from the angle-addition formula,
/// instead of three libm calls per point. Larger angles fall back to libm.
/// Comparing haversine values (`h`) instead of distances avoids the `asin` for every point;
/// `h` grows monotonically with the distance.
struct HaversineKernel {
    static let radiansPerDegree: Double = .pi / 180
    /// Half-angles up to this use the polynomials below.
    static let smallAngle: Double = 0.04

    let latitude: Double
    let longitude: Double
    let cosLatitude: Double
    let sinLatitude: Double

    init(center: GeoPoint) {
        latitude = center.latitude * Self.radiansPerDegree
        longitude = center.longitude * Self.radiansPerDegree
        cosLatitude = cos(latitude)
        sinLatitude = sin(latitude)
    }

    /// sin²(d / 2R) for the great-circle distance d between the centre and the point.
    @inline(__always)
    func haversine(latitudeDegrees: Double, longitudeDegrees: Double) -> Double {
        let pointLatitude = latitudeDegrees * Self.radiansPerDegree
        let halfDLat = (pointLatitude - latitude) * 0.5
        var dLon = longitudeDegrees * Self.radiansPerDegree - longitude
        if dLon > .pi { dLon -= 2 * .pi } else if dLon < -.pi { dLon += 2 * .pi }
        let halfDLon = dLon * 0.5

        let sinHalfDLat: Double
        let cosPointLatitude: Double
        if abs(halfDLat) <= Self.smallAngle {
            sinHalfDLat = Self.smallSin(halfDLat)
            let cosHalfDLat = Self.smallCos(halfDLat)
            // cos(φ1 + Δ) = cos φ1 cos Δ − sin φ1 sin Δ, with the double-angle identities for Δ.
            let cosDLat = 1 - 2 * sinHalfDLat * sinHalfDLat
            let sinDLat = 2 * sinHalfDLat * cosHalfDLat
            cosPointLatitude = cosLatitude * cosDLat - sinLatitude * sinDLat
        } else {
            sinHalfDLat = sin(halfDLat)
            cosPointLatitude = cos(pointLatitude)
        }
        let sinHalfDLon = abs(halfDLon) <= Self.smallAngle ? Self.smallSin(halfDLon) : sin(halfDLon)
        let h = sinHalfDLat * sinHalfDLat + cosLatitude * cosPointLatitude * sinHalfDLon * sinHalfDLon
        return min(1, max(0, h))
    }

    /// Same as `haversine(latitudeDegrees:longitudeDegrees:)` for a stored fixed-point position.
    @inline(__always)
    func haversine(latitudeUnits: Int32, longitudeUnits: Int32) -> Double {
        haversine(latitudeDegrees: FixedPoint.decode(latitudeUnits), longitudeDegrees: FixedPoint.decode(longitudeUnits))
    }

    @inline(__always)
    static func distanceMeters(haversine h: Double) -> Double {
        2 * Haversine.earthRadiusMeters * asin(min(1, max(0, h)).squareRoot())
    }

    /// The haversine value of a distance: points with `h` at most this are within `meters`.
    static func haversine(distanceMeters meters: Double) -> Double {
        let halfAngle = min(.pi / 2, max(0, meters / (2 * Haversine.earthRadiusMeters)))
        let s = sin(halfAngle)
        return s * s
    }

    /// Taylor series to x⁷; the first omitted term is below half an ulp for |x| ≤ 0.04.
    @inline(__always)
    static func smallSin(_ x: Double) -> Double {
        let x2 = x * x
        return x * (1 + x2 * (-1.0 / 6 + x2 * (1.0 / 120 + x2 * (-1.0 / 5040))))
    }

    /// Taylor series to x⁸; the first omitted term is below 1e-20 for |x| ≤ 0.04.
    @inline(__always)
    static func smallCos(_ x: Double) -> Double {
        let x2 = x * x
        return 1 + x2 * (-0.5 + x2 * (1.0 / 24 + x2 * (-1.0 / 720 + x2 * (1.0 / 40320))))
    }
}
