/// Carries published events to the hub of every node.
///
/// Why a seam with two forms: one node needs nothing but a function call (`LocalBus`); many
/// nodes share PostgreSQL, whose LISTEN/NOTIFY delivers each committed event to every node in
/// commit order (`PostgresBus`). Either way the event is persisted in the same transaction
/// that assigns its sequence number, so replay sees exactly what was delivered.
public protocol ClusterBus: Sendable {
    /// Makes the event durable (when `persist`) and delivers it to every node's hub.
    func publish(room: String, name: String, payloadJSON: String, persist: Bool, ackToken: AckToken?) async throws -> RealtimeEvent

    /// Tells every other node that the delivery with `token` was acknowledged (the publisher
    /// that waits for it may be elsewhere).
    func forwardAck(_ token: String) async throws

    /// Persists and delivers many events in one transaction (a job offered to two hundred
    /// drivers is one commit, not two hundred). Events are written in room order, so
    /// concurrent batches lock rooms in the same order; each room's events keep their order.
    func publish(batch: [OutgoingEvent]) async throws
}

/// One event of a batch publish.
public struct OutgoingEvent: Sendable {
    public var room: String
    public var name: String
    public var payloadJSON: String

    public init(room: String, name: String, payloadJSON: String) {
        self.room = room
        self.name = name
        self.payloadJSON = payloadJSON
    }
}

extension Array where Element == OutgoingEvent {
    /// Sorted by room, keeping each room's events in their given order.
    var inRoomOrder: [OutgoingEvent] {
        enumerated().sorted { ($0.element.room, $0.offset) < ($1.element.room, $1.offset) }.map(\.element)
    }
}
