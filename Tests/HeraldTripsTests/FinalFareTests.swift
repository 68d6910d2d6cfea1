import HeraldCore
import HeraldGeo
import Testing

@testable import HeraldTrips

@Suite struct FinalFareTests {
    static let origin = GeoPoint(latitude: 37.7749, longitude: -122.4194)
    /// Base 250, 120 a km, 30 a minute, at least 700 (the STANDARD defaults).
    static let model = FareModel(rates: RideTypeConfig(), trafficFactor: 1.4)

    static func north(_ meters: Double) -> GeoPoint {
        GeoPoint(latitude: origin.latitude + meters / 111_226.3, longitude: origin.longitude)
    }

    @Test func theTrailIsSummedAndPricedWithTheTimeTaken() {
        // 0 → 2 km → 5 km north: 5 km driven (not the 0 → 5 km straight line twice), in 15 minutes.
        let fare = FinalFare(
            trail: [Self.origin, Self.north(2_000), Self.north(5_000)], startedAt: 1_000_000, completedAt: 1_000_000 + 900_000,
            estimatedDistanceMeters: 9_999, model: Self.model, surge: 1.0)
        #expect(fare.distanceSource == "trail")
        #expect(abs(fare.distanceMeters - 5_000) <= 1)
        #expect(fare.durationSeconds == 900)
        // 250 + 120 × 5 + 30 × 15 = 1,300
        #expect(fare.amountMinor == 1_300)
    }

    @Test func aDetourCostsWhatWasDriven() {
        let out = FinalFare(
            trail: [Self.origin, Self.north(3_000), Self.north(1_000)], startedAt: 0, completedAt: 600_000,
            estimatedDistanceMeters: 1_000, model: Self.model, surge: 1.0)
        #expect(abs(out.distanceMeters - 5_000) <= 1)
        #expect(out.amountMinor == 250 + 600 + 300)
    }

    @Test func surgeMultipliesAndTheMinimumHolds() {
        let short = FinalFare(
            trail: [Self.origin, Self.north(200)], startedAt: 0, completedAt: 60_000, estimatedDistanceMeters: 200, model: Self.model, surge: 1.0)
        #expect(short.amountMinor == 700)
        let surged = FinalFare(
            trail: [Self.origin, Self.north(200)], startedAt: 0, completedAt: 60_000, estimatedDistanceMeters: 200, model: Self.model, surge: 1.5)
        #expect(surged.amountMinor == 1_050)  // the minimum, surged
        let long = FinalFare(
            trail: [Self.origin, Self.north(10_000)], startedAt: 0, completedAt: 1_200_000, estimatedDistanceMeters: 0, model: Self.model, surge: 1.25)
        // (250 + 1,200 + 600) × 1.25 = 2,562.5, rounded half up
        #expect(long.amountMinor == 2_563)
    }

    @Test func withoutTwoShownSamplesTheEstimateStandsIn() {
        for trail in [[GeoPoint](), [Self.origin]] {
            let fare = FinalFare(trail: trail, startedAt: 0, completedAt: 600_000, estimatedDistanceMeters: 4_000, model: Self.model, surge: 1.0)
            #expect(fare.distanceSource == "estimate" && fare.distanceMeters == 4_000)
            #expect(fare.amountMinor == 250 + 480 + 300)
        }
        // A clock that went backwards is no negative time.
        #expect(FinalFare(trail: [], startedAt: 10_000, completedAt: 0, estimatedDistanceMeters: 0, model: Self.model, surge: 1).durationSeconds == 0)
    }
}
