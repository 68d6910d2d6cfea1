import HeraldGeo
import Testing

@testable import HeraldTrips

@Suite struct PolylineTests {
    @Test func googleDocumentedExample() {
        let points = [
            GeoPoint(latitude: 38.5, longitude: -120.2),
            GeoPoint(latitude: 40.7, longitude: -120.95),
            GeoPoint(latitude: 43.252, longitude: -126.453),
        ]
        #expect(Polyline.encode(points) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
    }

    @Test func pointsAreDeltaEncoded() {
        // The first point alone is the start of the documented example.
        #expect(Polyline.encode([GeoPoint(latitude: 38.5, longitude: -120.2)]) == "_p~iF~ps|U")
        // Repeating a point adds a zero delta for each coordinate ("?" is 0 + 63).
        let same = GeoPoint(latitude: 38.5, longitude: -120.2)
        #expect(Polyline.encode([same, same]) == "_p~iF~ps|U??")
    }

    @Test func smallValues() {
        #expect(Polyline.encode([]) == "")
        #expect(Polyline.encode([GeoPoint(latitude: 0, longitude: 0)]) == "??")
        // −0.00001° is −1 unit: zig-zag 1 → "@".
        #expect(Polyline.encode([GeoPoint(latitude: -0.00001, longitude: 0)]) == "@?")
        // +0.00001° is +1 unit: zig-zag 2 → "A".
        #expect(Polyline.encode([GeoPoint(latitude: 0.00001, longitude: 0)]) == "A?")
    }

    @Test func encodedCharactersArePrintableASCII() {
        let encoded = Polyline.encode([
            GeoPoint(latitude: 37.7749, longitude: -122.4194),
            GeoPoint(latitude: 37.8044, longitude: -122.2712),
            GeoPoint(latitude: -33.8688, longitude: 151.2093),
        ])
        #expect(!encoded.isEmpty)
        #expect(encoded.unicodeScalars.allSatisfy { $0.value >= 63 && $0.value <= 126 })
    }

    @Test func routeEstimateIsTheStraightLineTimesTheDetour() {
        let from = GeoPoint(latitude: 37.7749, longitude: -122.4194)
        let to = GeoPoint(latitude: 37.8044, longitude: -122.2712)
        let route = RouteEstimate(from: from, to: to, detourFactor: 1.3, speedMps: 8.3)
        let straight = Haversine.distanceMeters(from, to)
        #expect(abs(route.distanceMeters - straight * 1.3) < 1e-6)
        #expect(abs(route.durationSeconds - straight * 1.3 / 8.3) < 1e-6)
        #expect(route.polyline == Polyline.encode([from, to]))
        #expect(route.polyline == "c|peFf`ejVkwDg}[")
        // San Francisco → Oakland is about 13.4 km in a straight line.
        #expect(straight > 13_000 && straight < 14_000, "got \(straight)")
    }

    @Test func routeEstimateAlongAMeridian() {
        // One degree of latitude on Redis's sphere: R × π / 180 ≈ 111 226.3 m.
        let oneDegree = Haversine.earthRadiusMeters * .pi / 180
        let route = RouteEstimate(from: GeoPoint(latitude: 0, longitude: 0), to: GeoPoint(latitude: 1, longitude: 0), detourFactor: 1.5, speedMps: 10)
        #expect(abs(route.distanceMeters - oneDegree * 1.5) < 0.01, "got \(route.distanceMeters)")
        #expect(abs(route.durationSeconds - oneDegree * 1.5 / 10) < 0.001, "got \(route.durationSeconds)")
    }

    @Test func detourAndSpeedScaleTheEstimate() {
        let from = GeoPoint(latitude: 37.7749, longitude: -122.4194)
        let to = GeoPoint(latitude: 37.8044, longitude: -122.2712)
        let straight = RouteEstimate(from: from, to: to, detourFactor: 1.0, speedMps: 10)
        let winding = RouteEstimate(from: from, to: to, detourFactor: 2.0, speedMps: 10)
        let fast = RouteEstimate(from: from, to: to, detourFactor: 1.0, speedMps: 20)
        #expect(abs(winding.distanceMeters - 2 * straight.distanceMeters) < 1e-6)
        #expect(abs(winding.durationSeconds - 2 * straight.durationSeconds) < 1e-6)
        #expect(fast.distanceMeters == straight.distanceMeters)
        #expect(abs(fast.durationSeconds - straight.durationSeconds / 2) < 1e-6)
    }

    @Test func samePointIsZero() {
        let p = GeoPoint(latitude: 37.7749, longitude: -122.4194)
        let route = RouteEstimate(from: p, to: p, detourFactor: 1.3, speedMps: 8.3)
        #expect(route.distanceMeters == 0)
        #expect(route.durationSeconds == 0)
    }
}
