/// Carries published events to the hub of every node.
///
/// Why a seam with two forms: one node needs nothing but a function call (`LocalBus`); many
/// nodes share PostgreSQL, whose LISTEN/NOTIFY delivers each committed event to every node in
/// commit order (`PostgresBus`). Either way the event is persisted in the same transaction
/// that assigns its sequence number, so replay sees exactly what was delivered.
public protocol ClusterBus: Sendable {
    /// Makes the event durable (when `persist`) and delivers it to every node's hub.
    func publish(room: String, name: String, payloadJSON: String, persist: Bool, ackToken: String?) async throws -> RealtimeEvent

    /// Tells every other node that the delivery with `token` was acknowledged (the publisher
    /// that waits for it may be elsewhere).
    func forwardAck(_ token: String) async throws
}
