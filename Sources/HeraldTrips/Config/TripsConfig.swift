import HeraldCore

/// Ride requests, trips and live tracking: fares, matching, the location stream's
/// limits and fraud thresholds, and when ETAs are told.
public struct TripsConfig: ConfigSection, Sendable, Equatable {
    /// ISO 4217 code of every fare; amounts are its minor units.
    public var currency = "USD"
    /// The rates of each ride type (`STANDARD`, `XL`, …); a request names one.
    public var rideTypes: [String: RideTypeConfig] = [
        "STANDARD": RideTypeConfig(),
        "XL": RideTypeConfig(baseFareMinor: 400, perKmMinor: 190, perMinuteMinor: 45, minimumFareMinor: 1_000, capacity: 6),
    ]
    /// The radius of each offer round; the request expires after the last.
    public var searchRadiiMeters: [Double] = [2_000, 5_000]
    /// How long a request searches before it ends unmatched (`DRIVER_UNAVAILABLE`).
    public var requestTimeoutSeconds = 300
    /// Road distance ≈ straight line × this (no routing engine is assumed).
    public var routeDetourFactor = 1.3
    /// The speed the route estimate and a driver without recent speed are assumed to go.
    public var averageSpeedMps = 8.3
    /// ETAs never assume a slower speed than this (a stopped car is not an infinite ETA).
    public var minimumSpeedMps = 3.0
    /// The high end of the fare range assumes the trip takes this much longer (traffic).
    public var trafficFactor = 1.5
    public var surge = SurgeConfig()
    public var location = LocationRulesConfig()
    /// An ETA is republished only when it moved by more than this…
    public var etaUpdateThresholdSeconds = 30
    /// …and pushed to the rider when it moved by more than this.
    public var etaPushThresholdSeconds = 300

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("trips")
        checks.check(currency.count == 3 && currency.allSatisfy { $0.isUppercase && $0.isASCII }, "currency", "must be an ISO 4217 code such as USD")
        checks.check(!rideTypes.isEmpty, "ride_types", "must name at least one ride type")
        for (name, rates) in rideTypes.sorted(by: { $0.key < $1.key }) {
            checks.check(
                (1...32).contains(name.count) && name.allSatisfy { ($0.isUppercase || $0 == "_" || $0.isNumber) && $0.isASCII }, "ride_types",
                "names are 1 to 32 of A-Z, 0-9 and _ (\(name))")
            for (field, value) in [
                ("base_fare_minor", rates.baseFareMinor), ("per_km_minor", rates.perKmMinor), ("per_minute_minor", rates.perMinuteMinor),
                ("minimum_fare_minor", rates.minimumFareMinor),
            ] {
                checks.check((0...1_000_000).contains(value), "ride_types.\(name).\(field)", "must be between 0 and 1000000")
            }
            checks.check((1...20).contains(rates.capacity), "ride_types.\(name).capacity", "must be between 1 and 20")
        }
        checks.check(!searchRadiiMeters.isEmpty && searchRadiiMeters.count <= 10, "search_radii_meters", "must list 1 to 10 radii")
        checks.check(searchRadiiMeters.allSatisfy { $0.isFinite && $0 >= 100 && $0 <= 100_000 }, "search_radii_meters", "each must be between 100 and 100000")
        checks.check(zip(searchRadiiMeters, searchRadiiMeters.dropFirst()).allSatisfy { $0 < $1 }, "search_radii_meters", "must grow")
        checks.check((10...3_600).contains(requestTimeoutSeconds), "request_timeout_seconds", "must be between 10 and 3600")
        checks.check(routeDetourFactor.isFinite && (1...3).contains(routeDetourFactor), "route_detour_factor", "must be between 1 and 3")
        checks.check(averageSpeedMps.isFinite && (1...60).contains(averageSpeedMps), "average_speed_mps", "must be between 1 and 60")
        checks.check(minimumSpeedMps.isFinite && (0.5...30).contains(minimumSpeedMps), "minimum_speed_mps", "must be between 0.5 and 30")
        checks.check(trafficFactor.isFinite && (1...5).contains(trafficFactor), "traffic_factor", "must be between 1 and 5")
        checks.check((1...3_600).contains(etaUpdateThresholdSeconds), "eta_update_threshold_seconds", "must be between 1 and 3600")
        checks.check((1...86_400).contains(etaPushThresholdSeconds), "eta_push_threshold_seconds", "must be between 1 and 86400")
        checks.add(surge.validationErrors() + location.validationErrors())
        return checks.errors
    }
}

/// One ride type's rates (minor units) and how many riders its vehicles carry.
public struct RideTypeConfig: ConfigSection, Sendable, Equatable {
    public var baseFareMinor = 250
    public var perKmMinor = 120
    public var perMinuteMinor = 30
    public var minimumFareMinor = 700
    public var capacity = 4

    public init() {}

    public init(baseFareMinor: Int = 250, perKmMinor: Int = 120, perMinuteMinor: Int = 30, minimumFareMinor: Int = 700, capacity: Int = 4) {
        self.baseFareMinor = baseFareMinor
        self.perKmMinor = perKmMinor
        self.perMinuteMinor = perMinuteMinor
        self.minimumFareMinor = minimumFareMinor
        self.capacity = capacity
    }
}

/// Surge: demand (open requests) against supply (free drivers) in the pickup's grid cell.
public struct SurgeConfig: ConfigSection, Sendable, Equatable {
    public var enabled = true
    /// The side of a grid cell.
    public var cellSizeMeters = 2_000.0
    /// Each unit of demand per driver above 1 adds this much to the multiplier…
    public var sensitivity = 0.5
    /// …up to this.
    public var maxMultiplier = 3.0

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("trips.surge")
        checks.check(cellSizeMeters.isFinite && (100...50_000).contains(cellSizeMeters), "cell_size_meters", "must be between 100 and 50000")
        checks.check(sensitivity.isFinite && (0...10).contains(sensitivity), "sensitivity", "must be between 0 and 10")
        checks.check(maxMultiplier.isFinite && (1...10).contains(maxMultiplier), "max_multiplier", "must be between 1 and 10")
        return checks.errors
    }
}

/// The driver location stream: rate limits by state, what is shared, what is suspicious.
public struct LocationRulesConfig: ConfigSection, Sendable, Equatable {
    /// On the way to a pickup or in a trip: this many samples per second…
    public var activePerSecond = 1.0
    /// …online without a trip: one per this many seconds…
    public var idleIntervalSeconds = 30.0
    /// …after a burst of this many.
    public var burst = 5
    /// Samples less accurate than this are kept but not shown to the rider.
    public var broadcastMaxAccuracyMeters = 50.0
    /// Faster than this between two samples is impossible.
    public var maxSpeedKmh = 200.0
    /// A jump longer than this…
    public var teleportMeters = 1_000.0
    /// …in less than this is teleportation.
    public var teleportWindowSeconds = 5.0
    /// This many samples in a row with accuracy exactly 0.0 m look synthetic.
    public var zeroAccuracyRun = 3
    /// During a ride, farther than this (or half the trip's straight length, if more) from
    /// the pickup–dropoff segment flags ROUTE_DEVIATION.
    public var routeDeviationMeters = 2_000.0

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("trips.location")
        checks.check(activePerSecond.isFinite && (0.01...1_000).contains(activePerSecond), "active_per_second", "must be between 0.01 and 1000")
        checks.check(idleIntervalSeconds.isFinite && (0.001...3_600).contains(idleIntervalSeconds), "idle_interval_seconds", "must be between 0.001 and 3600")
        checks.check((1...1_000).contains(burst), "burst", "must be between 1 and 1000")
        checks.check(
            broadcastMaxAccuracyMeters.isFinite && (1...10_000).contains(broadcastMaxAccuracyMeters), "broadcast_max_accuracy_meters",
            "must be between 1 and 10000")
        checks.check(maxSpeedKmh.isFinite && (10...2_000).contains(maxSpeedKmh), "max_speed_kmh", "must be between 10 and 2000")
        checks.check(teleportMeters.isFinite && (10...100_000).contains(teleportMeters), "teleport_meters", "must be between 10 and 100000")
        checks.check(teleportWindowSeconds.isFinite && (0.1...600).contains(teleportWindowSeconds), "teleport_window_seconds", "must be between 0.1 and 600")
        checks.check((2...100).contains(zeroAccuracyRun), "zero_accuracy_run", "must be between 2 and 100")
        checks.check(
            routeDeviationMeters.isFinite && (100...100_000).contains(routeDeviationMeters), "route_deviation_meters", "must be between 100 and 100000")
        return checks.errors
    }
}
