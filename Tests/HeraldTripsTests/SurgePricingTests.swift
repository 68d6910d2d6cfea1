import Foundation
import HeraldCore
import Testing

@testable import HeraldTrips

@Suite struct SurgePricingTests {
    /// Defaults: enabled, 2 km cells, sensitivity 0.5, max 3.0.
    static let pricing = SurgePricing(config: SurgeConfig())

    /// Metres per degree of latitude on Redis's sphere.
    static let metersPerDegree = 111_226.3

    static func offset(_ latitude: Double, _ longitude: Double, north: Double = 0, east: Double = 0) -> (Double, Double) {
        (latitude + north / metersPerDegree, longitude + east / (metersPerDegree * cos(latitude * .pi / 180)))
    }

    @Test func defaults() {
        let config = SurgeConfig()
        #expect(config.enabled)
        #expect(config.cellSizeMeters == 2_000)
        #expect(config.sensitivity == 0.5)
        #expect(config.maxMultiplier == 3.0)
    }

    @Test func noSurgeWithEnoughDrivers() {
        #expect(Self.pricing.multiplier(openRequests: 3, freeDrivers: 5) == 1.0)
        #expect(Self.pricing.multiplier(openRequests: 3, freeDrivers: 3) == 1.0)
        #expect(Self.pricing.multiplier(openRequests: 1, freeDrivers: 1) == 1.0)
    }

    @Test func noSurgeWithoutRequests() {
        #expect(Self.pricing.multiplier(openRequests: 0, freeDrivers: 0) == 1.0)
        #expect(Self.pricing.multiplier(openRequests: 0, freeDrivers: 4) == 1.0)
    }

    @Test func noDriversCountsAsOne() {
        // A lone request in an empty area is not surged; a queue of them is.
        #expect(Self.pricing.multiplier(openRequests: 1, freeDrivers: 0) == 1.0)
        #expect(Self.pricing.multiplier(openRequests: 3, freeDrivers: 0) == 2.0)
        #expect(Self.pricing.multiplier(openRequests: 50, freeDrivers: 0) == 3.0)
    }

    @Test func steppedFormula() {
        // ratio 3 → 1 + (3 − 1) × 0.5 = 2.0
        #expect(Self.pricing.multiplier(openRequests: 3, freeDrivers: 1) == 2.0)
        // ratio 2 → 1.5
        #expect(Self.pricing.multiplier(openRequests: 4, freeDrivers: 2) == 1.5)
        // ratio 1.5 → 1.25 → 1.2
        #expect(Self.pricing.multiplier(openRequests: 3, freeDrivers: 2) == 1.2)
    }

    @Test func roundsDownToTenths() {
        // ratio 1.75 → 1.375 → 1.3 (not 1.4)
        #expect(Self.pricing.multiplier(openRequests: 7, freeDrivers: 4) == 1.3)
        // ratio 4/3 → 1.1666… → 1.1 (not 1.2)
        #expect(Self.pricing.multiplier(openRequests: 4, freeDrivers: 3) == 1.1)
        // ratio 5/3 → 1.333… → 1.3
        #expect(Self.pricing.multiplier(openRequests: 5, freeDrivers: 3) == 1.3)
        // ratio 1.1 → 1.05 → 1.0
        #expect(Self.pricing.multiplier(openRequests: 11, freeDrivers: 10) == 1.0)
    }

    @Test func resultIsAlwaysAWholeTenth() {
        for requests in 0...30 {
            for drivers in 0...12 {
                let m = Self.pricing.multiplier(openRequests: requests, freeDrivers: drivers)
                #expect(abs(m * 10 - (m * 10).rounded()) < 1e-9, "\(requests)/\(drivers) → \(m)")
                #expect(m >= 1.0 && m <= 3.0, "\(requests)/\(drivers) → \(m)")
            }
        }
    }

    @Test func cappedAtMax() {
        // ratio 10 → 5.5, capped
        #expect(Self.pricing.multiplier(openRequests: 10, freeDrivers: 1) == 3.0)
        var config = SurgeConfig()
        config.maxMultiplier = 1.8
        let capped = SurgePricing(config: config)
        #expect(capped.multiplier(openRequests: 3, freeDrivers: 1) == 1.8)
        #expect(capped.multiplier(openRequests: 9, freeDrivers: 0) == 1.8)
    }

    @Test func sensitivityScalesTheStep() {
        var config = SurgeConfig()
        config.sensitivity = 1.0
        config.maxMultiplier = 10
        let sharp = SurgePricing(config: config)
        #expect(sharp.multiplier(openRequests: 3, freeDrivers: 1) == 3.0)
        #expect(sharp.multiplier(openRequests: 6, freeDrivers: 1) == 6.0)
    }

    @Test func disabledIsAlwaysOne() {
        var config = SurgeConfig()
        config.enabled = false
        let off = SurgePricing(config: config)
        #expect(off.multiplier(openRequests: 10, freeDrivers: 0) == 1.0)
        #expect(off.multiplier(openRequests: 10, freeDrivers: 1) == 1.0)
    }

    @Test func cellNamesRowAndColumn() {
        #expect(Self.pricing.cell(latitude: 0.001, longitude: 0.001) == "0:0")
        #expect(Self.pricing.cell(latitude: -0.001, longitude: -0.001) == "-1:-1")
        #expect(Self.pricing.cell(latitude: 0.001, longitude: -0.001) == "0:-1")
        // 2 km north of the equator at 0.02° ≈ 2226 m: row 1
        #expect(Self.pricing.cell(latitude: 0.02, longitude: 0.001) == "1:0")
    }

    @Test func nearbyPointsShareACell() {
        // San Francisco sits near the middle of its cell (row fraction ≈ 0.55, column ≈ 0.44).
        let (lat, lng) = (37.7749, -122.4194)
        let home = Self.pricing.cell(latitude: lat, longitude: lng)
        for (north, east) in [(100.0, 0.0), (-100.0, 0.0), (0.0, 100.0), (0.0, -100.0), (70.0, 70.0)] {
            let (a, b) = Self.offset(lat, lng, north: north, east: east)
            #expect(Self.pricing.cell(latitude: a, longitude: b) == home, "\(north) m north, \(east) m east")
        }
    }

    @Test func distantPointsDoNot() {
        let (lat, lng) = (37.7749, -122.4194)
        let home = Self.pricing.cell(latitude: lat, longitude: lng)
        for (north, east) in [(5_000.0, 0.0), (-5_000.0, 0.0), (0.0, 5_000.0), (0.0, -5_000.0)] {
            let (a, b) = Self.offset(lat, lng, north: north, east: east)
            #expect(Self.pricing.cell(latitude: a, longitude: b) != home, "\(north) m north, \(east) m east")
        }
    }

    @Test func cellSizeFollowsConfig() {
        var config = SurgeConfig()
        config.cellSizeMeters = 20_000
        let coarse = SurgePricing(config: config)
        let (lat, lng) = (37.7749, -122.4194)
        // In 20 km cells San Francisco is at row fraction ≈ 0.26, column ≈ 0.08 from the west
        // edge, so 5 km north or east stays inside; in 2 km cells it does not.
        for (north, east) in [(5_000.0, 0.0), (0.0, 5_000.0)] {
            let (a, b) = Self.offset(lat, lng, north: north, east: east)
            #expect(coarse.cell(latitude: a, longitude: b) == coarse.cell(latitude: lat, longitude: lng), "\(north) m north, \(east) m east")
            #expect(Self.pricing.cell(latitude: a, longitude: b) != Self.pricing.cell(latitude: lat, longitude: lng))
        }
        #expect(coarse.cell(latitude: lat, longitude: lng) == "210:-539")
        #expect(Self.pricing.cell(latitude: lat, longitude: lng) == "2102:-5387")
    }

    @Test func changedThreshold() {
        #expect(!SurgePricing.changed(1.2, 1.2))
        #expect(!SurgePricing.changed(1.0, 1.04))
        #expect(!SurgePricing.changed(1.04, 1.0))
        #expect(SurgePricing.changed(1.0, 1.1))
        #expect(SurgePricing.changed(2.0, 1.9))
        #expect(SurgePricing.changed(1.5, 1.0))
        #expect(SurgePricing.changed(1.0, 3.0))
    }
}
