import Foundation
import Testing

@testable import HeraldGeo

@Suite struct HaversineTests {
    /// The textbook formula with libm for every term, to check the kernel's polynomials against.
    static func reference(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let toRadians = Double.pi / 180
        let u = sin((b.latitude - a.latitude) * toRadians / 2)
        let v = sin((b.longitude - a.longitude) * toRadians / 2)
        let h = u * u + cos(a.latitude * toRadians) * cos(b.latitude * toRadians) * v * v
        return 2 * Haversine.earthRadiusMeters * asin(min(1, h.squareRoot()))
    }

    @Test func usesRedisEarthRadius() {
        #expect(Haversine.earthRadiusMeters == 6_372_797.560856)
    }

    @Test func sanFranciscoToLosAngeles() {
        let sf = GeoPoint(latitude: 37.7749, longitude: -122.4194)
        let la = GeoPoint(latitude: 34.0522, longitude: -118.2437)
        let d = Haversine.distanceMeters(sf, la)
        #expect(abs(d - 559_000) / 559_000 < 0.005, "got \(d)")
    }

    @Test func palermoToCataniaMatchesRedisDocumentation() {
        // GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania; GEODIST → 166274.1516 m.
        let palermo = GeoPoint(latitude: 38.115556, longitude: 13.361389)
        let catania = GeoPoint(latitude: 37.502669, longitude: 15.087269)
        #expect(abs(Haversine.distanceMeters(palermo, catania) - 166_274.1516) < 1)
    }

    @Test func oneDegreeOfLatitudeAndHalfTheEquator() {
        let metersPerDegree = Haversine.earthRadiusMeters * .pi / 180
        let d = Haversine.distanceMeters(GeoPoint(latitude: 10, longitude: 20), GeoPoint(latitude: 11, longitude: 20))
        #expect(abs(d - metersPerDegree) < 1e-6)
        let antipodal = Haversine.distanceMeters(GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: 0, longitude: 180))
        #expect(abs(antipodal - .pi * Haversine.earthRadiusMeters) < 1e-6)
        #expect(Haversine.distanceMeters(GeoPoint(latitude: 51.5, longitude: -0.1), GeoPoint(latitude: 51.5, longitude: -0.1)) == 0)
    }

    @Test func crossesTheAntimeridianTheShortWay() {
        let east = GeoPoint(latitude: 0, longitude: 179.999)
        let west = GeoPoint(latitude: 0, longitude: -179.999)
        let expected = Haversine.earthRadiusMeters * 0.002 * .pi / 180
        #expect(abs(Haversine.distanceMeters(east, west) - expected) < 1e-6)
    }

    @Test func polynomialKernelAgreesWithLibmAtEveryScale() {
        var rng = SeededGenerator(seed: 7)
        for scale in [1e-6, 1e-4, 1e-2, 0.1, 1, 5, 30, 180] {
            for _ in 0..<2000 {
                let a = GeoPoint(latitude: .random(in: -89.9...89.9, using: &rng), longitude: .random(in: -180...180, using: &rng))
                let b = GeoPoint(
                    latitude: min(90, max(-90, a.latitude + .random(in: -scale...scale, using: &rng))),
                    longitude: a.longitude + .random(in: -scale...scale, using: &rng))
                let d = Haversine.distanceMeters(a, b)
                let r = Self.reference(a, b)
                // Within a micrometre or 1e-12 relative.
                #expect(abs(d - r) <= max(1e-6, r * 1e-12), "a=\(a) b=\(b) kernel=\(d) libm=\(r)")
            }
        }
    }
}
