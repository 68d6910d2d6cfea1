import HeraldCore
import HeraldGeo
import Testing

@testable import HeraldTrips

@Suite struct LocationFraudCheckTests {
    /// 2027-01-15 08:00:00 UTC in epoch milliseconds.
    static let t0: Int64 = 1_800_000_000_000
    static let start = GeoPoint(latitude: 37.7749, longitude: -122.4194)
    /// Metres per degree of latitude on Redis's sphere (Haversine along a meridian is exact).
    static let metersPerDegree = 111_226.3

    static func north(_ meters: Double, of point: GeoPoint = start) -> GeoPoint {
        GeoPoint(latitude: point.latitude + meters / metersPerDegree, longitude: point.longitude)
    }

    /// Defaults: 200 km/h, teleport > 1000 m in < 5 s, a run of 3 zero accuracies.
    static func checker() -> LocationFraudCheck {
        LocationFraudCheck(rules: LocationRulesConfig())
    }

    @Test func defaultRules() {
        let rules = LocationRulesConfig()
        #expect(rules.maxSpeedKmh == 200)
        #expect(rules.teleportMeters == 1_000)
        #expect(rules.teleportWindowSeconds == 5)
        #expect(rules.zeroAccuracyRun == 3)
    }

    @Test func firstSampleNeverWarns() {
        var check = Self.checker()
        #expect(check.check(Self.start, accuracyMeters: 5, at: Self.t0).isEmpty)
    }

    @Test func normalDriveHasNoWarnings() {
        var check = Self.checker()
        // 15 m/s (54 km/h), one sample a second for a minute.
        for i in 0..<60 {
            let warnings = check.check(Self.north(15 * Double(i)), accuracyMeters: 5, at: Self.t0 + Int64(i) * 1_000)
            #expect(warnings.isEmpty, "sample \(i): \(warnings.map(\.code))")
        }
    }

    @Test func sixtyKmhOverAMinuteIsFine() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 1000 m in 60 s = 60 km/h
        #expect(check.check(Self.north(1_000), accuracyMeters: 5, at: Self.t0 + 60_000).isEmpty)
        // a further 2500 m in 60 s = 150 km/h: fast but possible
        #expect(check.check(Self.north(3_500), accuracyMeters: 5, at: Self.t0 + 120_000).isEmpty)
    }

    @Test func aLongJumpInAFewSecondsIsTeleportation() throws {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        let warnings = check.check(Self.north(1_500), accuracyMeters: 5, at: Self.t0 + 2_000)
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first)
        #expect(warning.code == "TELEPORTATION")
        #expect(warning.action == "SAMPLE_NOT_SHARED")
        #expect(warning.message.contains("m in"))
        #expect(!LocationFraudCheck.shareable(warnings))
    }

    @Test func theSampleAfterAJumpIsComparedWithTheJump() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        #expect(check.check(Self.north(1_500), accuracyMeters: 5, at: Self.t0 + 2_000).map(\.code) == ["TELEPORTATION"])
        // 15 m further on, a second later: normal again.
        #expect(check.check(Self.north(1_515), accuracyMeters: 5, at: Self.t0 + 3_000).isEmpty)
    }

    @Test func teleportWindowIsExclusive() {
        var inside = Self.checker()
        _ = inside.check(Self.start, accuracyMeters: 5, at: Self.t0)
        #expect(inside.check(Self.north(1_500), accuracyMeters: 5, at: Self.t0 + 4_900).map(\.code) == ["TELEPORTATION"])

        // At exactly 5 s it is no longer teleportation, but 1080 km/h is still impossible.
        var atEdge = Self.checker()
        _ = atEdge.check(Self.start, accuracyMeters: 5, at: Self.t0)
        #expect(atEdge.check(Self.north(1_500), accuracyMeters: 5, at: Self.t0 + 5_000).map(\.code) == ["IMPOSSIBLE_SPEED"])
    }

    @Test func aJumpOfAtMostTheTeleportDistanceIsNotTeleportation() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 900 m in 2 s is not a teleport (≤ 1000 m) but is 1620 km/h.
        #expect(check.check(Self.north(900), accuracyMeters: 5, at: Self.t0 + 2_000).map(\.code) == ["IMPOSSIBLE_SPEED"])
    }

    @Test func impossibleSpeed() throws {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 1.2 km in 10 s = 432 km/h (too slow a jump for teleportation, too fast for a car)
        let warnings = check.check(Self.north(1_200), accuracyMeters: 5, at: Self.t0 + 10_000)
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first)
        #expect(warning.code == "IMPOSSIBLE_SPEED")
        #expect(warning.action == "SAMPLE_NOT_SHARED")
        #expect(warning.message.contains("km/h"))
        #expect(!LocationFraudCheck.shareable(warnings))
    }

    @Test func justOverTheSpeedLimitOverAMinute() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 4000 m in 60 s = 240 km/h
        #expect(check.check(Self.north(4_000), accuracyMeters: 5, at: Self.t0 + 60_000).map(\.code) == ["IMPOSSIBLE_SPEED"])
    }

    @Test func smallJitterIsIgnored() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 30 m in 0.1 s would be 1080 km/h, but moves up to 50 m are GPS noise.
        #expect(check.check(Self.north(30), accuracyMeters: 5, at: Self.t0 + 100).isEmpty)
        // And back again.
        #expect(check.check(Self.start, accuracyMeters: 5, at: Self.t0 + 200).isEmpty)
    }

    @Test func gapsUnderASecondCountAsOneSecond() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 55 m in 0.1 s counts as 55 m/s = 198 km/h: allowed.
        #expect(check.check(Self.north(55), accuracyMeters: 5, at: Self.t0 + 100).isEmpty)
        // 60 m more in 0.1 s counts as 216 km/h: flagged.
        #expect(check.check(Self.north(115), accuracyMeters: 5, at: Self.t0 + 200).map(\.code) == ["IMPOSSIBLE_SPEED"])
    }

    @Test func threeZeroAccuraciesInARowAreAnAnomaly() throws {
        var check = Self.checker()
        #expect(check.check(Self.start, accuracyMeters: 0.0, at: Self.t0).isEmpty)
        #expect(check.check(Self.start, accuracyMeters: 0.0, at: Self.t0 + 1_000).isEmpty)
        let third = check.check(Self.start, accuracyMeters: 0.0, at: Self.t0 + 2_000)
        #expect(third.count == 1)
        let warning = try #require(third.first)
        #expect(warning.code == "ACCURACY_ANOMALY")
        #expect(warning.action == "NONE")
        #expect(LocationFraudCheck.shareable(third))
        // Reported once per run, not on every further zero.
        #expect(check.check(Self.start, accuracyMeters: 0.0, at: Self.t0 + 3_000).isEmpty)
        #expect(check.check(Self.start, accuracyMeters: 0.0, at: Self.t0 + 4_000).isEmpty)
    }

    @Test func aNonZeroAccuracyResetsTheRun() {
        var check = Self.checker()
        let accuracies: [Double?] = [0, 0, 5, 0, 0, nil, 0, 0]
        for (i, accuracy) in accuracies.enumerated() {
            let warnings = check.check(Self.start, accuracyMeters: accuracy, at: Self.t0 + Int64(i) * 1_000)
            #expect(warnings.isEmpty, "sample \(i) (accuracy \(String(describing: accuracy)))")
        }
        // The third zero after the last reset completes a run.
        #expect(check.check(Self.start, accuracyMeters: 0, at: Self.t0 + 8_000).map(\.code) == ["ACCURACY_ANOMALY"])
    }

    @Test func nearlyZeroIsNotZero() {
        var check = Self.checker()
        for i in 0..<5 {
            #expect(check.check(Self.start, accuracyMeters: 0.001, at: Self.t0 + Int64(i) * 1_000).isEmpty)
        }
    }

    @Test func runLengthFollowsConfig() {
        var rules = LocationRulesConfig()
        rules.zeroAccuracyRun = 2
        var check = LocationFraudCheck(rules: rules)
        #expect(check.check(Self.start, accuracyMeters: 0, at: Self.t0).isEmpty)
        #expect(check.check(Self.start, accuracyMeters: 0, at: Self.t0 + 1_000).map(\.code) == ["ACCURACY_ANOMALY"])
    }

    @Test func aSampleCanCarryBothKindsOfWarning() {
        var check = Self.checker()
        _ = check.check(Self.start, accuracyMeters: 0, at: Self.t0)
        _ = check.check(Self.start, accuracyMeters: 0, at: Self.t0 + 1_000)
        let warnings = check.check(Self.north(2_000), accuracyMeters: 0, at: Self.t0 + 2_000)
        #expect(warnings.map(\.code) == ["TELEPORTATION", "ACCURACY_ANOMALY"])
        #expect(!LocationFraudCheck.shareable(warnings))
    }

    @Test func shareable() {
        #expect(LocationFraudCheck.shareable([]))
        let anomaly = LocationFraudCheck.Warning(code: "ACCURACY_ANOMALY", action: "NONE", message: "x")
        let teleport = LocationFraudCheck.Warning(code: "TELEPORTATION", action: "SAMPLE_NOT_SHARED", message: "x")
        #expect(LocationFraudCheck.shareable([anomaly]))
        #expect(!LocationFraudCheck.shareable([teleport]))
        #expect(!LocationFraudCheck.shareable([anomaly, teleport]))
    }

    @Test func stricterSpeedLimit() {
        var rules = LocationRulesConfig()
        rules.maxSpeedKmh = 50
        var check = LocationFraudCheck(rules: rules)
        _ = check.check(Self.start, accuracyMeters: 5, at: Self.t0)
        // 1000 m in 60 s = 60 km/h > 50
        #expect(check.check(Self.north(1_000), accuracyMeters: 5, at: Self.t0 + 60_000).map(\.code) == ["IMPOSSIBLE_SPEED"])
    }

    /// A mock-provider fix is kept from the rider; a failed integrity verdict is flagged once per
    /// run of failures and does not stop the map.
    @Test func mockLocationsAreNotSharedAndFailedIntegrityIsFlaggedOnce() {
        var check = Self.checker()
        let mocked = check.check(Self.start, accuracyMeters: 5, mockLocation: true, at: Self.t0)
        #expect(mocked.map(\.code) == ["MOCK_LOCATION"] && !LocationFraudCheck.shareable(mocked))
        let failed = check.check(Self.north(10), accuracyMeters: 5, integrityFailed: true, at: Self.t0 + 1_000)
        #expect(failed.map(\.code) == ["DEVICE_INTEGRITY"] && LocationFraudCheck.shareable(failed))
        #expect(check.check(Self.north(20), accuracyMeters: 5, integrityFailed: true, at: Self.t0 + 2_000).isEmpty)
        #expect(check.check(Self.north(30), accuracyMeters: 5, at: Self.t0 + 3_000).isEmpty)
        #expect(check.check(Self.north(40), accuracyMeters: 5, integrityFailed: true, at: Self.t0 + 4_000).map(\.code) == ["DEVICE_INTEGRITY"])
    }
}
