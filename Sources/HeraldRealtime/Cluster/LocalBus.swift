import HeraldCore
import HeraldStorage

/// The single-node bus: persists, then delivers to this node's hub.
///
/// Why one publish at a time: the sequence number is assigned in the database and the
/// delivery follows it; doing both under one gate keeps every room's events in order on
/// the wire. (SQLite serialises writers anyway, so nothing is lost.)
public final class LocalBus: ClusterBus {
    private let hub: RealtimeHub
    private let gate = AsyncSerialGate()

    public init(hub: RealtimeHub) {
        self.hub = hub
    }

    public func publish(room: String, name: String, payloadJSON: String, persist: Bool, ackToken: AckToken?) async throws -> RealtimeEvent {
        let hub = self.hub
        return try await gate.run {
            let now = hub.clock.now().epochMilliseconds
            var seq: Int64?
            if persist {
                let store = hub.eventStore
                seq = try await hub.database.transaction { db in
                    try await store.append(db, room: room, event: name, payload: payloadJSON, now: now)
                }
            }
            let event = RealtimeEvent(room: room, seq: seq, name: name, payloadJSON: payloadJSON, createdAt: now, ackToken: ackToken)
            await hub.deliverLocally(event)
            return event
        }
    }

    @discardableResult
    public func publish(batch: [OutgoingEvent]) async throws -> [RealtimeEvent] {
        guard !batch.isEmpty else { return [] }
        let hub = self.hub
        let order = batch.roomOrder
        let durable = order.filter { batch[$0].persist }
        return try await gate.run {
            let now = hub.clock.now().epochMilliseconds
            let store = hub.eventStore
            let seqs =
                durable.isEmpty
                ? []
                : try await hub.database.transaction { db in
                    try await store.appendBatch(db, durable.map { (batch[$0].room, batch[$0].name, batch[$0].payloadJSON) }, now: now)
                }
            let events = batch.events(createdAt: now, durable: durable, seqs: seqs)
            for index in order {
                await hub.deliverLocally(events[index])
            }
            return events
        }
    }

    /// One node: the hub already resolved it.
    public func forwardAck(_ token: String) async throws {}
}
