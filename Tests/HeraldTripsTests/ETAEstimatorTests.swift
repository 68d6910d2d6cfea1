import HeraldGeo
import Testing

@testable import HeraldTrips

@Suite struct ETAEstimatorTests {
    /// Metres per degree of latitude on Redis's sphere (Haversine along a meridian is exact).
    static let metersPerDegree = 111_226.3
    static let origin = GeoPoint(latitude: 37.7749, longitude: -122.4194)

    static func north(_ meters: Double) -> GeoPoint {
        GeoPoint(latitude: origin.latitude + meters / metersPerDegree, longitude: origin.longitude)
    }

    /// The trips defaults: detour 1.3, floor 3 m/s, 8.3 m/s without samples.
    static func estimator() -> ETAEstimator {
        ETAEstimator(detourFactor: 1.3, minimumSpeedMps: 3, defaultSpeedMps: 8.3)
    }

    /// An estimator that has seen `count` samples of exactly `speed` (so the smoothed speed is `speed`).
    static func estimator(observed speed: Double, count: Int) -> ETAEstimator {
        var e = estimator()
        for _ in 0..<count { e.observe(speedMps: speed) }
        return e
    }

    @Test func secondsAreRoadDistanceOverTheDefaultSpeed() {
        let e = Self.estimator()
        #expect(e.speedMps == nil)
        #expect(e.samples == 0)
        #expect(e.effectiveSpeed == 8.3)
        let seconds = e.seconds(from: Self.origin, to: Self.north(1_000))
        // 1000 m × 1.3 / 8.3 m/s ≈ 156.6 s
        #expect(abs(seconds - 1_300.0 / 8.3) < 0.001, "got \(seconds)")
        let exact = Haversine.distanceMeters(Self.origin, Self.north(1_000)) * 1.3 / 8.3
        #expect(abs(seconds - exact) < 1e-9)
    }

    /// `traffic_conditions` from the smoothed speed against the city speed (8.3 m/s here).
    @Test func trafficConditionsFollowTheObservedSpeed() {
        #expect(Self.estimator().trafficConditions == "UNKNOWN")
        #expect(Self.estimator(observed: 8.3, count: 2).trafficConditions == "LIGHT")
        #expect(Self.estimator(observed: 12, count: 2).trafficConditions == "LIGHT")
        #expect(Self.estimator(observed: 5, count: 2).trafficConditions == "MODERATE")  // 60 % of 8.3 is 4.98
        #expect(Self.estimator(observed: 4.9, count: 2).trafficConditions == "HEAVY")
        #expect(Self.estimator(observed: 0, count: 3).trafficConditions == "HEAVY")
    }

    @Test func secondsUseTheObservedSpeed() {
        let e = Self.estimator(observed: 10, count: 1)
        #expect(e.effectiveSpeed == 10)
        #expect(abs(e.seconds(from: Self.origin, to: Self.north(1_000)) - 130) < 0.001)
    }

    @Test func aStoppedCarUsesTheSpeedFloor() {
        let e = Self.estimator(observed: 0, count: 1)
        #expect(e.speedMps == 0)
        #expect(e.effectiveSpeed == 3)
        let seconds = e.seconds(from: Self.origin, to: Self.north(1_000))
        #expect(seconds.isFinite)
        // 1300 m at 3 m/s
        #expect(abs(seconds - 1_300.0 / 3) < 0.001, "got \(seconds)")
    }

    @Test func aSlowCarAlsoUsesTheFloor() {
        let e = Self.estimator(observed: 1.5, count: 3)
        #expect(e.effectiveSpeed == 3)
    }

    @Test func observeSmoothsTheSpeed() throws {
        var e = Self.estimator()
        e.observe(speedMps: 10)
        #expect(e.speedMps == 10)
        #expect(e.samples == 1)
        e.observe(speedMps: 20)
        // 10 × 0.7 + 20 × 0.3
        let smoothed = try #require(e.speedMps)
        #expect(abs(smoothed - 13) < 1e-9)
        #expect(e.samples == 2)
        e.observe(speedMps: 0)
        // 13 × 0.7
        let slowed = try #require(e.speedMps)
        #expect(abs(slowed - 9.1) < 1e-9)
        #expect(e.samples == 3)
    }

    @Test func oneFastSampleDoesNotHalveTheETA() throws {
        var e = Self.estimator(observed: 10, count: 5)
        e.observe(speedMps: 40)
        // 10 × 0.7 + 40 × 0.3 = 19, not 40
        let smoothed = try #require(e.speedMps)
        #expect(abs(smoothed - 19) < 1e-9)
    }

    @Test func invalidSpeedsAreIgnored() {
        var e = Self.estimator(observed: 10, count: 1)
        e.observe(speedMps: -1)
        e.observe(speedMps: .nan)
        e.observe(speedMps: .infinity)
        #expect(e.speedMps == 10)
        #expect(e.samples == 1)
    }

    @Test func confidence() {
        let fresh = Self.estimator(observed: 10, count: 3)
        #expect(fresh.confidence(staleSeconds: 0) == "HIGH")
        #expect(fresh.confidence(staleSeconds: 30) == "HIGH")
        #expect(fresh.confidence(staleSeconds: 30.5) == "LOW")
        #expect(fresh.confidence(staleSeconds: 120) == "LOW")

        let few = Self.estimator(observed: 10, count: 2)
        #expect(few.confidence(staleSeconds: 0) == "MEDIUM")
        #expect(few.confidence(staleSeconds: 31) == "LOW")

        #expect(Self.estimator().confidence(staleSeconds: 0) == "MEDIUM")
    }

    // Along one meridian: the driver, then the pickup 1 km north, then the dropoff 3 km further.
    static let driver = north(0)
    static let pickup = north(1_000)
    static let dropoff = north(4_000)

    @Test func acceptedGivesPickupAndDropoff() throws {
        // 10 m/s: 1300 m to the pickup = 130 s; 3900 m of ride = 390 s.
        let e = Self.estimator(observed: 10, count: 3)
        let etas = e.etas(position: Self.driver, state: .accepted, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 2)
        let pickup = try #require(etas.pickup)
        let dropoff = try #require(etas.dropoff)
        #expect(pickup.seconds == 130)
        #expect(pickup.confidence == "HIGH")
        #expect(dropoff.seconds == 520)
        #expect(dropoff.seconds > pickup.seconds)
        // The dropoff depends on the pickup wait too, so it is never HIGH before the ride.
        #expect(dropoff.confidence == "MEDIUM")
    }

    @Test func acceptedWithStaleLocationIsLow() throws {
        let e = Self.estimator(observed: 10, count: 3)
        let etas = e.etas(position: Self.driver, state: .accepted, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 45)
        let pickup = try #require(etas.pickup)
        let dropoff = try #require(etas.dropoff)
        #expect(pickup.confidence == "LOW")
        #expect(dropoff.confidence == "LOW")
    }

    @Test func arrivedPickupIsZero() throws {
        let e = Self.estimator(observed: 10, count: 3)
        // The driver's position no longer matters once arrived.
        let etas = e.etas(position: Self.north(-5_000), state: .arrived, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 100)
        let pickup = try #require(etas.pickup)
        let dropoff = try #require(etas.dropoff)
        #expect(pickup.seconds == 0)
        #expect(pickup.confidence == "HIGH")
        #expect(dropoff.seconds == 390)
        #expect(dropoff.confidence == "MEDIUM")
    }

    @Test func inProgressOnlyDropoff() throws {
        let e = Self.estimator(observed: 10, count: 3)
        // Halfway: 2000 m left → 2600 m of road at 10 m/s.
        let etas = e.etas(position: Self.north(2_000), state: .inProgress, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 1)
        #expect(etas.pickup == nil)
        let dropoff = try #require(etas.dropoff)
        #expect(dropoff.seconds == 260)
        #expect(dropoff.confidence == "HIGH")
    }

    @Test func noETAsOutsideATrip() {
        let e = Self.estimator(observed: 10, count: 3)
        for state in [TripState.requested, .completed, .cancelled] {
            let etas = e.etas(position: Self.driver, state: state, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 0)
            #expect(etas.pickup == nil, "\(state)")
            #expect(etas.dropoff == nil, "\(state)")
        }
    }

    @Test func stoppedDriverStillHasAFiniteETA() throws {
        let e = Self.estimator(observed: 0, count: 3)
        let etas = e.etas(position: Self.driver, state: .accepted, pickup: Self.pickup, dropoff: Self.dropoff, staleSeconds: 0)
        // 1300 m at the 3 m/s floor ≈ 433 s
        let pickup = try #require(etas.pickup)
        #expect(pickup.seconds == 433)
    }

    @Test func movedThreshold() {
        typealias ETA = ETAEstimator.ETA
        let old = ETA(seconds: 100, confidence: "HIGH")
        #expect(!ETAEstimator.moved(old, ETA(seconds: 120, confidence: "HIGH"), threshold: 30))
        #expect(!ETAEstimator.moved(old, ETA(seconds: 80, confidence: "HIGH"), threshold: 30))
        #expect(!ETAEstimator.moved(old, ETA(seconds: 130, confidence: "HIGH"), threshold: 30))
        #expect(ETAEstimator.moved(old, ETA(seconds: 131, confidence: "HIGH"), threshold: 30))
        #expect(ETAEstimator.moved(old, ETA(seconds: 69, confidence: "HIGH"), threshold: 30))
        // Confidence alone is not a move.
        #expect(!ETAEstimator.moved(old, ETA(seconds: 100, confidence: "LOW"), threshold: 30))
    }

    @Test func appearingOrVanishingCounts() {
        let eta = ETAEstimator.ETA(seconds: 100, confidence: "HIGH")
        #expect(ETAEstimator.moved(nil, eta, threshold: 30))
        #expect(ETAEstimator.moved(eta, nil, threshold: 30))
        #expect(!ETAEstimator.moved(nil, nil, threshold: 30))
    }
}
