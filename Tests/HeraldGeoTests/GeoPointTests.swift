import HeraldGeo
import Testing

@Suite struct GeoPointTests {
    @Test func acceptsTheWholeRangeIncludingItsEdges() {
        for (latitude, longitude) in [(0.0, 0.0), (90, 180), (-90, -180), (37.7749, -122.4194), (-0.0, -0.0)] {
            let point = GeoPoint.validated(latitude: latitude, longitude: longitude)
            #expect(point == GeoPoint(latitude: latitude, longitude: longitude))
        }
    }

    @Test(arguments: [
        (Double.nan, 0.0), (0, .nan), (.infinity, 0), (0, -.infinity), (-.infinity, 0), (0, .infinity),
        (90.000_000_1, 0), (-90.000_000_1, 0), (0, 180.000_000_1), (0, -180.000_000_1), (1e300, 0),
    ])
    func rejectsNonFiniteAndOutOfRange(latitude: Double, longitude: Double) {
        #expect(GeoPoint.validated(latitude: latitude, longitude: longitude) == nil)
        #expect(!GeoPoint(latitude: latitude, longitude: longitude).isValid)
    }
}
