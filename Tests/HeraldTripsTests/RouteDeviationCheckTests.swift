import HeraldGeo
import Testing

@testable import HeraldTrips

@Suite struct RouteDeviationCheckTests {
    static let pickup = GeoPoint(latitude: 37.7749, longitude: -122.4194)
    static func at(north: Double, east: Double) -> GeoPoint {
        GeoPoint(latitude: pickup.latitude + north / 111_226.3, longitude: pickup.longitude + east / (111_226.3 * 0.7908))
    }

    @Test func distanceIsToTheSegmentNotTheLine() {
        // A 10 km route due north.
        let check = RouteDeviationCheck(pickup: Self.pickup, dropoff: Self.at(north: 10_000, east: 0), minimumCorridorMeters: 2_000)
        #expect(abs(check.distanceFromRoute(Self.at(north: 5_000, east: 3_000)) - 3_000) < 15)
        #expect(check.distanceFromRoute(Self.at(north: 5_000, east: 0)) < 1)
        // Beyond the dropoff the distance is to the end, not to the line extended.
        #expect(abs(check.distanceFromRoute(Self.at(north: 14_000, east: 0)) - 4_000) < 15)
        #expect(abs(check.distanceFromRoute(Self.at(north: -3_000, east: 4_000)) - 5_000) < 25)
        // Half of a 10 km trip is wider than the 2 km minimum.
        #expect(abs(check.corridorMeters - 5_000) < 5)
    }

    @Test func leavingTheCorridorWarnsOncePerExcursion() {
        var check = RouteDeviationCheck(pickup: Self.pickup, dropoff: Self.at(north: 3_000, east: 0), minimumCorridorMeters: 2_000)
        #expect(check.corridorMeters == 2_000)
        #expect(check.check(Self.at(north: 1_000, east: 1_500)) == nil)
        let warning = check.check(Self.at(north: 1_500, east: 2_500))
        #expect(warning?.code == "ROUTE_DEVIATION" && warning?.action == "NONE")
        #expect(check.check(Self.at(north: 2_000, east: 3_000)) == nil)  // still out: told already
        #expect(check.check(Self.at(north: 2_500, east: 500)) == nil)  // back on route
        #expect(check.check(Self.at(north: 2_500, east: -2_600))?.code == "ROUTE_DEVIATION")  // a second excursion
    }

    @Test func aZeroLengthRouteMeasuresFromThePickup() {
        var check = RouteDeviationCheck(pickup: Self.pickup, dropoff: Self.pickup, minimumCorridorMeters: 2_000)
        #expect(abs(check.distanceFromRoute(Self.at(north: 0, east: 1_000)) - 1_000) < 10)
        #expect(check.check(Self.at(north: 2_100, east: 0)) != nil)
    }
}
