import Synchronization

/// Counters of the realtime gateway, read by the server's `/metrics`.
///
/// Why plain counters here: the realtime module stays free of a metrics backend; the server
/// renders these in Prometheus format next to its HTTP metrics. Hot paths add once per
/// publish or message, never per delivery.
public final class RealtimeCounters: Sendable {
    public enum Counter: Int, CaseIterable, Sendable {
        /// Messages received from clients (both protocols).
        case messagesIn
        /// Events handed to connections by broadcasts.
        case deliveries
        /// Replays answered with the missed events.
        case replays
        /// Replays that could not be served (history no longer covered the gap).
        case replaysUnavailable
        /// Socket.IO sessions recovered after a reconnect.
        case recoveries
        /// Socket.IO recoveries that failed (unknown pid, expired, or history gone).
        case recoveriesFailed
        /// Connections dropped because their outbound queue overflowed.
        case slowDisconnects
        /// Client acknowledgements of events published with an ack token.
        case acksReceived

        public var metricName: String {
            switch self {
            case .messagesIn: "herald_realtime_messages_in_total"
            case .deliveries: "herald_realtime_deliveries_total"
            case .replays: "herald_realtime_replays_total"
            case .replaysUnavailable: "herald_realtime_replays_unavailable_total"
            case .recoveries: "herald_realtime_recoveries_total"
            case .recoveriesFailed: "herald_realtime_recoveries_failed_total"
            case .slowDisconnects: "herald_realtime_slow_disconnects_total"
            case .acksReceived: "herald_realtime_acks_received_total"
            }
        }
    }

    private let values = Mutex([Int](repeating: 0, count: Counter.allCases.count))

    public init() {}

    public func add(_ counter: Counter, _ amount: Int = 1) {
        values.withLock { $0[counter.rawValue] &+= amount }
    }

    public func value(_ counter: Counter) -> Int {
        values.withLock { $0[counter.rawValue] }
    }
}
