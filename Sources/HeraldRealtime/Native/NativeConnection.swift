import Foundation
import HeraldAuth
import HeraldCore
import Synchronization

/// One client of the native WebSocket protocol (`/api/v1/realtime`): JSON messages with a
/// `type`, channel subscriptions with replay from `last_event_id`, and `reconnect` answered
/// with a `state_sync`.
public final class NativeConnection: RealtimeSubscriber {
    public let connectionID: UInt64
    public let identity: Identity
    public var userID: String? { identity.userID }
    /// False when the client connected with `?acks=false` (see `DeliveryAcks`).
    public let acknowledgesDeliveries: Bool
    let queue: OutboundQueue
    private let state: Mutex<State>

    struct State {
        var tracker = SubscriptionTracker()
        var bucket: TokenBucket
        var closed = false
        /// Ack tokens of deliveries sent to this connection and not yet acknowledged.
        var pendingAcks: [String: AckToken] = [:]
    }

    init(connectionID: UInt64, identity: Identity, outboundLimit: Int, messagesPerSecond: Int, now: Date, acknowledgesDeliveries: Bool = true) {
        self.acknowledgesDeliveries = acknowledgesDeliveries
        self.connectionID = connectionID
        self.identity = identity
        queue = OutboundQueue(limitBytes: outboundLimit)
        state = Mutex(State(bucket: TokenBucket(limit: messagesPerSecond, window: 1, now: now)))
    }

    public var channels: [String] { state.withLock { $0.tracker.rooms } }

    // MARK: Outbound

    public func deliver(_ event: RealtimeEvent) {
        deliver(event, sharing: BroadcastFrames())
    }

    public func deliver(_ event: RealtimeEvent, sharing frames: BroadcastFrames) {
        let (admitted, ackToken) = state.withLock { state -> (Bool, AckToken?) in
            guard !state.closed, state.tracker.admit(event) == .send else { return (false, nil) }
            guard let token = event.ackToken, acknowledgesDeliveries, state.pendingAcks.count < 1024 else { return (true, nil) }
            state.pendingAcks[token.id] = token
            return (true, token)
        }
        guard admitted else { return }
        send(ackToken == nil ? frames.frame(for: "native") { Self.frame(event) } : Self.frame(event, ackID: ackToken?.id))
    }

    /// Takes back the ack token sent to this connection as `ackID`; nil for one it never got
    /// (a client cannot acknowledge someone else's delivery).
    func takeAck(_ ackID: String) -> AckToken? {
        state.withLock { $0.pendingAcks.removeValue(forKey: ackID) }
    }

    /// Sends a message to this client (domain handlers answer with it).
    public func reply(_ message: JSONValue) {
        send(message)
    }

    /// `{"type":…,"event_id":…,"channel":…,"payload":…}`, built around the shared payload text.
    static func frame(_ event: RealtimeEvent, ackID: String? = nil) -> String {
        var text = "{\"type\":"
        text += SocketPacketEncoder.jsonString(event.name)
        text += ",\"event_id\":"
        text += event.eventID.map(SocketPacketEncoder.jsonString) ?? "null"
        text += ",\"channel\":"
        text += SocketPacketEncoder.jsonString(event.room)
        if let ackID {
            text += ",\"ack_id\":"
            text += SocketPacketEncoder.jsonString(ackID)
        }
        text += ",\"payload\":"
        text += event.payloadJSON
        text += "}"
        return text
    }

    func send(_ text: String) {
        if !queue.enqueue(.text(text)) { queue.close(.slowConsumer) }
    }

    func send(_ message: JSONValue) {
        send(SocketPacketEncoder.json(message))
    }

    func sendError(_ code: ErrorCode, _ message: String, extra: [String: JSONValue] = [:]) {
        var object = extra
        object["type"] = "error"
        object["code"] = .string(code.rawValue)
        object["message"] = .string(message)
        send(.object(object))
    }

    // MARK: Subscriptions

    func isSubscribed(_ channel: String) -> Bool {
        state.withLock { $0.tracker.contains(channel) }
    }

    func follow(_ channel: String, after seq: Int64) {
        state.withLock { $0.tracker.follow(channel, after: seq) }
    }

    func beginReplay(_ channel: String, after seq: Int64) {
        state.withLock { $0.tracker.beginReplay(channel, after: seq) }
    }

    /// What the replay has to send; live events stay held until `completeReplay`.
    func drainReplay(_ channel: String, replayed: [RealtimeEvent]?) -> [RealtimeEvent] {
        state.withLock { $0.tracker.drainReplay(channel, replayed: replayed) }
    }

    /// After the replay went out: sends the live events held meanwhile, then lets live events
    /// through. Why in this order: a live event sent while the replayed ones were still being
    /// queued could reach the client first (an e2e storm saw event 12 before 11).
    func completeReplay(_ channel: String) {
        while let held = state.withLock({ $0.tracker.endReplay(channel) }) {
            for event in held { send(Self.frame(event)) }
        }
    }

    func forget(_ channel: String) {
        state.withLock { $0.tracker.leave(channel) }
    }

    /// Takes one token from the client's message budget; the wait in milliseconds when empty.
    func admitMessage(now: Date) -> Int? {
        state.withLock { state in
            switch state.bucket.take(now: now) {
            case .allowed: return nil
            case .limited:
                let seconds = (1 - state.bucket.tokens) / state.bucket.refillRate
                return max(1, Int((seconds * 1000).rounded(.up)))
            }
        }
    }

    func markClosed() {
        state.withLock { $0.closed = true }
        queue.close()
    }
}
