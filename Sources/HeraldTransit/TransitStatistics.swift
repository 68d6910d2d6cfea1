import Synchronization
import HeraldGTFS

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
}
