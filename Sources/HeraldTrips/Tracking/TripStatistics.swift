import HeraldCore
import Synchronization

/// What this node's ride matching did, for `/metrics`: requests, the drivers offered them,
/// accepts, how requests ended, and the fraud warnings the tracker raised.
public final class TripStatistics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var requests = 0
        /// Drivers a ride request was offered to.
        public var rideOffers = 0
        /// `won` (the accept made the trip), `lost` (another driver had it, or it closed).
        public var accepts = LabelledCounts()
        /// Requests that ended unmatched: `expired`, `cancelled`.
        public var requestsUnmatched = LabelledCounts()
        /// Fraud warnings on trips (`TripTracker`'s flags), by kind.
        public var flags = LabelledCounts()
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func requested() { state.withLock { $0.requests += 1 } }
    func offered(_ drivers: Int) { state.withLock { $0.rideOffers += drivers } }
    func accepted(won: Bool) { state.withLock { $0.accepts.add(won ? "won" : "lost") } }
    func unmatched(_ how: String) { state.withLock { $0.requestsUnmatched.add(how) } }
    func flagged(_ kind: String) { state.withLock { $0.flags.add(kind) } }
}
