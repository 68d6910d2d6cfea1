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
    /// drivers is one commit, not two hundred; a backend's batch publish is one request).
    /// Events are written in room order, so concurrent batches lock rooms in the same order;
    /// each room's events keep their order. Returns the events as published, in the order
    /// given (persisted ones with their sequence numbers).
    @discardableResult
    func publish(batch: [OutgoingEvent]) async throws -> [RealtimeEvent]
}

/// One event of a batch publish.
public struct OutgoingEvent: Sendable {
    public var room: String
    public var name: String
    public var payloadJSON: String
    /// Stored and replayable with a sequence number, or only delivered.
    public var persist: Bool

    public init(room: String, name: String, payloadJSON: String, persist: Bool = true) {
        self.room = room
        self.name = name
        self.payloadJSON = payloadJSON
        self.persist = persist
    }
}

extension Array where Element == OutgoingEvent {
    /// The events' indices sorted by room, each room's events in their given order.
    var roomOrder: [Int] {
        indices.sorted { (self[$0].room, $0) < (self[$1].room, $1) }
    }

    /// The published events in the given order: `durable` (indices in room order) are the
    /// ones that were stored, and got `seqs`, in that order.
    func events(createdAt: Int64, durable: [Int], seqs: [Int64]) -> [RealtimeEvent] {
        var seqOf = [Int64?](repeating: nil, count: count)
        for (index, seq) in zip(durable, seqs) { seqOf[index] = seq }
        return indices.map { index in
            RealtimeEvent(room: self[index].room, seq: seqOf[index], name: self[index].name, payloadJSON: self[index].payloadJSON, createdAt: createdAt)
        }
    }
}
