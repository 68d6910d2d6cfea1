import HeraldCore
import Testing

@testable import HeraldTrips

@Suite struct FareModelTests {
    /// Default STANDARD rates: base 250, 120 per km, 30 per minute, minimum 700 (minor units).
    static let standard = RideTypeConfig()

    @Test func defaultStandardRates() {
        #expect(Self.standard == RideTypeConfig(baseFareMinor: 250, perKmMinor: 120, perMinuteMinor: 30, minimumFareMinor: 700, capacity: 4))
    }

    @Test func fareIsBasePlusDistancePlusTime() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        // 250 + 120 × 5 km + 30 × 10 min = 250 + 600 + 300
        #expect(model.fare(distanceMeters: 5_000, durationSeconds: 600) == 1_150)
        // 250 + 120 × 3.21 + 30 × 457/60 = 250 + 385.2 + 228.5
        #expect(abs(model.fare(distanceMeters: 3_210, durationSeconds: 457) - 863.7) < 1e-9)
    }

    @Test func estimateRangeInMinorUnits() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        let estimate = model.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.0)
        #expect(estimate.minMinor == 1_150)
        // High end: 900 s → 30 × 15 = 450 → 250 + 600 + 450
        #expect(estimate.maxMinor == 1_300)
        #expect(estimate.surgeMultiplier == 1.0)
    }

    @Test func amountsRoundToTheNearestMinorUnit() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        let estimate = model.estimate(distanceMeters: 3_210, durationSeconds: 457, surge: 1.0)
        // 863.7 → 864; high end 250 + 385.2 + 30 × 685.5/60 (342.75) = 977.95 → 978
        #expect(estimate.minMinor == 864)
        #expect(estimate.maxMinor == 978)
    }

    @Test func halfAMinorUnitRoundsUp() {
        let rates = RideTypeConfig(baseFareMinor: 1_000, perKmMinor: 1, perMinuteMinor: 0, minimumFareMinor: 0)
        let model = FareModel(rates: rates, trafficFactor: 2)
        // 1000 + 1 × 0.5 km = 1000.5 → 1001 (half up, not to even)
        #expect(model.fare(distanceMeters: 500, durationSeconds: 60) == 1_000.5)
        let estimate = model.estimate(distanceMeters: 500, durationSeconds: 60, surge: 1.0)
        #expect(estimate.minMinor == 1_001)
        #expect(estimate.maxMinor == 1_001)
    }

    @Test func minimumFareAppliesToATinyRide() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        // 250 + 36 + 30 = 316 < 700
        #expect(model.fare(distanceMeters: 300, durationSeconds: 60) == 700)
        let estimate = model.estimate(distanceMeters: 300, durationSeconds: 60, surge: 1.0)
        #expect(estimate.minMinor == 700)
        #expect(estimate.maxMinor == 700)
        // Zero distance and time is still the minimum, never the base fare.
        #expect(model.fare(distanceMeters: 0, durationSeconds: 0) == 700)
    }

    @Test func minimumDoesNotApplyAboveIt() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        // 250 + 120 × 3 + 30 × 4 = 730 > 700
        #expect(model.fare(distanceMeters: 3_000, durationSeconds: 240) == 730)
    }

    @Test func surgeMultipliesBothEnds() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        let plain = model.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.0)
        let surged = model.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.5)
        #expect(surged.minMinor == 1_725)
        #expect(surged.maxMinor == 1_950)
        #expect(surged.surgeMultiplier == 1.5)
        #expect(surged.minMinor > plain.minMinor)
        #expect(surged.maxMinor > plain.maxMinor)
        let double = model.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 2.0)
        #expect(double.minMinor == 2 * plain.minMinor)
        #expect(double.maxMinor == 2 * plain.maxMinor)
    }

    @Test func surgeAppliesAfterTheMinimum() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        let estimate = model.estimate(distanceMeters: 300, durationSeconds: 60, surge: 2.0)
        #expect(estimate.minMinor == 1_400)
        #expect(estimate.maxMinor == 1_400)
    }

    @Test func maxUsesTheTrafficFactor() {
        let noTraffic = FareModel(rates: Self.standard, trafficFactor: 1.0)
        let flat = noTraffic.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.0)
        #expect(flat.minMinor == flat.maxMinor)

        let heavy = FareModel(rates: Self.standard, trafficFactor: 2.0)
        let range = heavy.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.0)
        // 1200 s → 30 × 20 = 600 → 250 + 600 + 600
        #expect(range.minMinor == 1_150)
        #expect(range.maxMinor == 1_450)
    }

    @Test func maxIsNeverBelowMin() {
        let model = FareModel(rates: Self.standard, trafficFactor: 1.5)
        for (meters, seconds) in [(0.0, 0.0), (300.0, 60.0), (1_234.0, 321.0), (25_000.0, 2_400.0), (120_000.0, 7_200.0)] {
            for surge in [1.0, 1.3, 2.5] {
                let estimate = model.estimate(distanceMeters: meters, durationSeconds: seconds, surge: surge)
                #expect(estimate.maxMinor >= estimate.minMinor, "\(meters) m, \(seconds) s, ×\(surge)")
                #expect(estimate.minMinor >= Int64(700), "the minimum holds at any surge ≥ 1")
            }
        }
    }

    @Test func otherRideTypesUseTheirOwnRates() throws {
        let xl = try #require(TripsConfig().rideTypes["XL"])
        let model = FareModel(rates: xl, trafficFactor: 1.5)
        // 400 + 190 × 5 + 45 × 10 = 1800
        #expect(model.estimate(distanceMeters: 5_000, durationSeconds: 600, surge: 1.0).minMinor == 1_800)
    }
}
