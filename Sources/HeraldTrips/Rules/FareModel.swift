import HeraldCore

/// The fare of a ride: base + distance + time, at least the minimum, times the surge.
///
/// Why a range: the time part depends on traffic, so the low end assumes the estimated
/// duration and the high end that duration times the traffic factor (the rideshare design: "honest
/// about variability; prevents disputes"). Amounts are integer minor units, rounded half up.
public struct FareModel: Sendable, Equatable {
    public var rates: RideTypeConfig
    public var trafficFactor: Double

    public init(rates: RideTypeConfig, trafficFactor: Double) {
        self.rates = rates
        self.trafficFactor = trafficFactor
    }

    public struct Estimate: Sendable, Equatable {
        public var minMinor: Int64
        public var maxMinor: Int64
        public var surgeMultiplier: Double
    }

    /// One fare for a known distance and duration, before surge.
    public func fare(distanceMeters: Double, durationSeconds: Double) -> Double {
        let raw = Double(rates.baseFareMinor) + Double(rates.perKmMinor) * distanceMeters / 1000 + Double(rates.perMinuteMinor) * durationSeconds / 60
        return max(raw, Double(rates.minimumFareMinor))
    }

    public func estimate(distanceMeters: Double, durationSeconds: Double, surge: Double) -> Estimate {
        let low = fare(distanceMeters: distanceMeters, durationSeconds: durationSeconds) * surge
        let high = fare(distanceMeters: distanceMeters, durationSeconds: durationSeconds * trafficFactor) * surge
        return Estimate(
            minMinor: Int64((low).rounded(.toNearestOrAwayFromZero)), maxMinor: Int64(high.rounded(.toNearestOrAwayFromZero)), surgeMultiplier: surge)
    }
}
