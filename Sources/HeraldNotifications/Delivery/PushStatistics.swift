import Synchronization

/// What the delivery worker has done on this node, for `/metrics`: outcomes, reasons of
/// failures and retries, a send-latency histogram and the last seen queue depth.
///
/// Why reasons are trimmed and capped: providers' reasons come from fixed tables, but some
/// carry free text; only the leading word is kept and at most 100 distinct reasons are
/// counted, so a metric label can never grow without bound.
public final class PushStatistics: Sendable {
    public static let latencyBucketsMs: [Int] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]

    public struct Snapshot: Sendable, Equatable {
        public var outcomes: [String: Int] = [:]
        /// Outcomes by notification type and provider (`unknown` where not known).
        public var outcomesByType: [TypedOutcome: Int] = [:]
        public var reasons: [String: Int] = [:]
        /// Cumulative counts per bucket of `latencyBucketsMs` (Prometheus `le` semantics).
        public var latencyBuckets: [Int] = Array(repeating: 0, count: PushStatistics.latencyBucketsMs.count)
        public var latencyCount = 0
        public var latencySumMs = 0
        public var queueDepth = 0
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    /// One label set of `herald_push_outcomes_by_type_total`.
    public struct TypedOutcome: Sendable, Hashable, Comparable {
        public var type: String
        public var provider: String
        public var outcome: String

        public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.type, lhs.provider, lhs.outcome) < (rhs.type, rhs.provider, rhs.outcome) }
    }

    /// Why typed outcomes are capped too: types are declared in the configuration (bounded
    /// names), but a deployment may declare many; past 500 label sets a new one counts as
    /// `other`.
    static let maxTypedOutcomes = 500

    func record(outcome: String, reason: String?, latencyMs: Int?, type: String? = nil, provider: String? = nil) {
        state.withLock { s in
            s.outcomes[outcome, default: 0] += 1
            var key = TypedOutcome(type: type.map(Self.label) ?? "unknown", provider: provider.map(Self.label) ?? "unknown", outcome: outcome)
            if s.outcomesByType[key] == nil && s.outcomesByType.count >= Self.maxTypedOutcomes { key.type = "other" }
            s.outcomesByType[key, default: 0] += 1
            if let reason {
                let key = Self.label(reason)
                if s.reasons[key] != nil || s.reasons.count < 100 { s.reasons[key, default: 0] += 1 }
            }
            if let latencyMs {
                s.latencyCount += 1
                s.latencySumMs += latencyMs
                for (index, bound) in Self.latencyBucketsMs.enumerated() where latencyMs <= bound {
                    s.latencyBuckets[index] += 1
                }
            }
        }
    }

    func setQueueDepth(_ depth: Int) {
        state.withLock { $0.queueDepth = depth }
    }

    /// The leading word of a reason (`gave_up: timeout` → `gave_up`), letters, digits, `_`, `-`.
    static func label(_ reason: String) -> String {
        let word = reason.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
        return word.isEmpty ? "other" : String(word.prefix(64))
    }
}
