import HeraldGTFS
import Synchronization

/// What the transit module has done on this node, for `/metrics`.
///
/// Labels are source and feed names from the configuration (or `push…` for posted
/// feeds), at most 100 of them, so a client cannot grow the label set.
public final class TransitStatistics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Realtime messages taken in, by source.
        public var realtimeAccepted: [String: Int] = [:]
        /// Realtime messages refused (did not parse, too large, wrong header), by source; the
        /// last good message keeps serving.
        public var realtimeRejected: [String: Int] = [:]
        /// Polls answered 304 Not Modified, by source.
        public var realtimeNotModified: [String: Int] = [:]
        /// Poll failures (network, status), by source.
        public var realtimeFetchFailures: [String: Int] = [:]
        /// Imports by outcome (succeeded, unchanged, failed).
        public var imports: [String: Int] = [:]
        /// Feed versions this node loaded from the database.
        public var versionLoads = 0
        /// Alert versions this node recorded first (new or changed alerts).
        public var alertVersions = 0
        /// Alert versions this node matched, the users they reached and the time it took.
        public var alertsMatched = 0
        public var alertMatchedUsers = 0
        public var alertMatchSeconds = 0.0
        /// Notifications this node wrote for alerts (one per user per version).
        public var alertPushesQueued = 0
        /// Digests of alerts quiet hours held back, sent by this node.
        public var alertDigests = 0
        /// Plans answered 503 PLANNER_BUSY (the planner's queue full or too slow).
        public var plansShed = 0
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    static func bump(_ counts: inout [String: Int], _ key: String) {
        if counts[key] != nil || counts.count < 100 { counts[key, default: 0] += 1 }
    }

    func accepted(_ source: String) { state.withLock { Self.bump(&$0.realtimeAccepted, source) } }
    func rejected(_ source: String) { state.withLock { Self.bump(&$0.realtimeRejected, source) } }
    func notModified(_ source: String) { state.withLock { Self.bump(&$0.realtimeNotModified, source) } }
    func fetchFailed(_ source: String) { state.withLock { Self.bump(&$0.realtimeFetchFailures, source) } }
    func imported(_ status: ImportStatus) { state.withLock { Self.bump(&$0.imports, status.rawValue) } }
    func loadedVersion() { state.withLock { $0.versionLoads += 1 } }
    func alertVersionSeen() { state.withLock { $0.alertVersions += 1 } }
    func alertMatched(users: Int, duration: Duration) {
        state.withLock {
            $0.alertsMatched += 1
            $0.alertMatchedUsers += users
            $0.alertMatchSeconds += Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
    }
    func alertPushesQueued(_ count: Int) { state.withLock { $0.alertPushesQueued += count } }
    func alertDigestSent() { state.withLock { $0.alertDigests += 1 } }
    func plannerShed() { state.withLock { $0.plansShed += 1 } }
}
