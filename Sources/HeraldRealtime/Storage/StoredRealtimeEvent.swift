/// One persisted realtime event: the unit of history and replay.
public struct StoredRealtimeEvent: Sendable, Equatable {
    public var room: String
    public var seq: Int64
    public var event: String
    /// The payload as compact JSON text, exactly as delivered.
    public var payload: String
    public var createdAt: Int64

    public init(room: String, seq: Int64, event: String, payload: String, createdAt: Int64) {
        self.room = room
        self.seq = seq
        self.event = event
        self.payload = payload
        self.createdAt = createdAt
    }
}
