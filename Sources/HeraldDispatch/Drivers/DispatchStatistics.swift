import HeraldCore
import Synchronization

/// What this node's dispatch did, for `/metrics`: offers, claims, and the drivers' location
/// stream (how samples fared, how accurate they were, how old when they arrived).
///
/// Why the age and accuracy of fixes: a rider's map and every offer round depend on them,
/// and a fleet whose phones report 300 m accuracy or arrive a minute late shows there
/// first. Only fixes that carry them are counted (the app's own `timestamp` for the age).
public final class DispatchStatistics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Drivers a job was offered to.
        public var jobOffers = 0
        /// `won` (the claim took the job), `lost` (another driver had it, or it closed).
        public var claims = LabelledCounts()
        /// `accepted`, `stale` (older sequence), `throttled`, `unknown_driver`.
        public var locationSamples = LabelledCounts()
        public var locationAccuracy = HistogramCounts(bounds: [5, 10, 20, 50, 100, 200, 500, 1000])
        /// Seconds from the device's fix to its arrival here (clock skew can make it small or
        /// negative; those count in the lowest bucket).
        public var locationAge = HistogramCounts(bounds: [0.5, 1, 2, 5, 10, 30, 60, 300])
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func offered(_ drivers: Int) {
        state.withLock { $0.jobOffers += drivers }
    }

    func claimed(won: Bool) {
        state.withLock { $0.claims.add(won ? "won" : "lost") }
    }

    func location(_ outcome: DriverTracker.LocationOutcome, update: LocationUpdate, receivedAt: Int64) {
        state.withLock { s in
            switch outcome {
            case .accepted:
                s.locationSamples.add("accepted")
                if let accuracy = update.accuracyMeters { s.locationAccuracy.observe(accuracy) }
                if let fix = update.clientTime { s.locationAge.observe(max(0, Double(receivedAt - fix) / 1000)) }
            case .stale: s.locationSamples.add("stale")
            case .throttled: s.locationSamples.add("throttled")
            case .unknownDriver: s.locationSamples.add("unknown_driver")
            }
        }
    }
}
