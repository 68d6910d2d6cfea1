import HeraldCore
import HeraldGeo

/// Spoofing signals in one driver's stream (the rideshare design's fraud checks): impossible speed,
/// teleportation, and a run of exactly 0.0 m accuracy.
///
/// Why compare with the previous sample, flagged or not: after a genuine jump (a GPS fix
/// after a tunnel) the next normal sample is shared again; a spoofer's jump still leaves a
/// flag on the trip for operators. Times are server receipt times (client clocks are not
/// trusted); below one second the gap counts as one second, so a burst of queued samples
/// after a dead zone is not taken for a rocket.
public struct LocationFraudCheck: Sendable, Equatable {
    public struct Warning: Sendable, Equatable {
        public var code: String
        /// `SAMPLE_NOT_SHARED` (the rider does not see this sample) or `NONE`.
        public var action: String
        public var message: String
    }

    public var rules: LocationRulesConfig
    var previous: (point: GeoPoint, at: Int64)?
    var zeroRun = 0
    /// A failed integrity verdict is flagged once per run of failures, not on every sample.
    var integrityFlagged = false

    public init(rules: LocationRulesConfig) {
        self.rules = rules
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.rules == b.rules && a.zeroRun == b.zeroRun && a.previous?.point == b.previous?.point && a.previous?.at == b.previous?.at
            && a.integrityFlagged == b.integrityFlagged
    }

    /// Judges a sample received at `at` (epoch ms) and remembers it. A fix the OS says came from
    /// a mock provider is not shown to the rider (the rideshare design's "mock location flag"); a failed
    /// device-integrity verdict (a jailbroken or tampered phone) flags the trip for operators
    /// but keeps the map moving, since such checks misfire on legitimate phones.
    public mutating func check(
        _ point: GeoPoint, accuracyMeters: Double?, mockLocation: Bool = false, integrityFailed: Bool = false, at: Int64
    ) -> [Warning] {
        var warnings: [Warning] = []
        if mockLocation {
            warnings.append(Warning(code: "MOCK_LOCATION", action: "SAMPLE_NOT_SHARED", message: "The device reports a mock location provider"))
        }
        if integrityFailed && !integrityFlagged {
            warnings.append(Warning(code: "DEVICE_INTEGRITY", action: "NONE", message: "The device failed its integrity check"))
        }
        integrityFlagged = integrityFailed
        if let previous {
            let meters = Haversine.distanceMeters(previous.point, point)
            let seconds = Double(max(0, at - previous.at)) / 1000
            if meters > rules.teleportMeters && seconds < rules.teleportWindowSeconds {
                warnings.append(
                    Warning(
                        code: "TELEPORTATION", action: "SAMPLE_NOT_SHARED",
                        message: "Location jumped \(Int(meters)) m in \(String(format: "%.1f", seconds)) s"))
            } else if meters > 50, meters / max(seconds, 1) * 3.6 > rules.maxSpeedKmh {
                warnings.append(
                    Warning(
                        code: "IMPOSSIBLE_SPEED", action: "SAMPLE_NOT_SHARED",
                        message: "Implied speed \(Int(meters / max(seconds, 1) * 3.6)) km/h"))
            }
        }
        if accuracyMeters == 0 {
            zeroRun += 1
            if zeroRun == rules.zeroAccuracyRun {
                warnings.append(Warning(code: "ACCURACY_ANOMALY", action: "NONE", message: "Location quality degraded"))
            }
        } else {
            zeroRun = 0
        }
        previous = (point, at)
        return warnings
    }

    /// Whether a sample with these warnings may reach the rider.
    public static func shareable(_ warnings: [Warning]) -> Bool {
        !warnings.contains { $0.action == "SAMPLE_NOT_SHARED" }
    }
}
