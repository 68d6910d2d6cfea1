import HeraldCore
import HeraldGeo

/// Pickup and dropoff ETAs from the remaining distance and the driver's recent speed.
///
/// Why a speed floor and a smoothed speed: a car at a red light would otherwise have an
/// infinite ETA, and one fast sample would halve it. Confidence says how much the number is
/// worth: HIGH with several recent samples, MEDIUM with few, LOW when the last is old.
public struct ETAEstimator: Sendable, Equatable {
    public var detourFactor: Double
    public var minimumSpeedMps: Double
    public var defaultSpeedMps: Double
    /// Smoothed speed (m/s) and how many samples fed it.
    public private(set) var speedMps: Double?
    public private(set) var samples = 0

    public init(detourFactor: Double, minimumSpeedMps: Double, defaultSpeedMps: Double) {
        self.detourFactor = detourFactor
        self.minimumSpeedMps = minimumSpeedMps
        self.defaultSpeedMps = defaultSpeedMps
    }

    /// Feeds a measured speed (the device's, or derived from two samples).
    public mutating func observe(speedMps value: Double) {
        guard value.isFinite, value >= 0 else { return }
        speedMps = speedMps.map { $0 * 0.7 + value * 0.3 } ?? value
        samples += 1
    }

    public struct ETA: Sendable, Equatable {
        public var seconds: Int
        public var confidence: String
    }

    public var effectiveSpeed: Double { max(minimumSpeedMps, speedMps ?? defaultSpeedMps) }

    /// The rideshare design's `traffic_conditions`, without a traffic feed: the driver's smoothed speed
    /// against the configured city speed. At least that speed is LIGHT, at least 60 % of it
    /// MODERATE, slower HEAVY; UNKNOWN until a speed was observed.
    public var trafficConditions: String {
        guard let speedMps, samples > 0 else { return "UNKNOWN" }
        if speedMps >= defaultSpeedMps { return "LIGHT" }
        return speedMps >= defaultSpeedMps * 0.6 ? "MODERATE" : "HEAVY"
    }

    public func confidence(staleSeconds: Double) -> String {
        if staleSeconds > 30 { return "LOW" }
        return samples >= 3 ? "HIGH" : "MEDIUM"
    }

    /// Seconds to cover the road distance from `from` to `to` at the effective speed.
    public func seconds(from: GeoPoint, to: GeoPoint) -> Double {
        Haversine.distanceMeters(from, to) * detourFactor / effectiveSpeed
    }

    /// The ETAs for a driver at `position` in `state`: pickup while on the way (0 once
    /// arrived), dropoff through the pickup before the ride starts.
    public func etas(position: GeoPoint, state: TripState, pickup: GeoPoint, dropoff: GeoPoint, staleSeconds: Double) -> (pickup: ETA?, dropoff: ETA?) {
        let confidence = confidence(staleSeconds: staleSeconds)
        switch state {
        case .accepted:
            let toPickup = seconds(from: position, to: pickup)
            let ride = seconds(from: pickup, to: dropoff)
            return (
                ETA(seconds: Int(toPickup.rounded()), confidence: confidence),
                ETA(seconds: Int((toPickup + ride).rounded()), confidence: confidence == "HIGH" ? "MEDIUM" : confidence)
            )
        case .arrived:
            return (ETA(seconds: 0, confidence: "HIGH"), ETA(seconds: Int(seconds(from: pickup, to: dropoff).rounded()), confidence: "MEDIUM"))
        case .inProgress:
            return (nil, ETA(seconds: Int(seconds(from: position, to: dropoff).rounded()), confidence: confidence))
        case .requested, .completed, .cancelled:
            return (nil, nil)
        }
    }

    /// Whether an ETA moved by more than `threshold` seconds (appearing or vanishing counts).
    public static func moved(_ old: ETA?, _ new: ETA?, threshold: Int) -> Bool {
        switch (old, new) {
        case (nil, nil): false
        case (nil, _), (_, nil): true
        case (let a?, let b?): abs(a.seconds - b.seconds) > threshold
        }
    }
}
