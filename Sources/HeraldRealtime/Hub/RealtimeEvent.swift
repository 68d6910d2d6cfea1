import HeraldCore

/// An event published to a room, as every protocol delivers it.
///
/// Why the payload travels as JSON text: a broadcast to 10,000 sockets encodes its payload
/// once; each protocol only wraps the shared text in its own frame.
public struct RealtimeEvent: Sendable, Equatable {
    public let room: String
    /// Position in the room's history (1, 2, 3, …); nil for an ephemeral event, which is
    /// neither kept nor replayed.
    public let seq: Int64?
    public let name: String
    public let payloadJSON: String
    public let createdAt: Int64
    /// Set when the publisher waits for a client to acknowledge this delivery: Socket.IO
    /// sends the event with an ack id, the native protocol with `ack_id`; the first client
    /// ack reaches `RealtimeHub.acknowledge`. Never persisted (a replay asks for no ack).
    public let ackToken: AckToken?

    public init(room: String, seq: Int64?, name: String, payloadJSON: String, createdAt: Int64, ackToken: AckToken? = nil) {
        self.ackToken = ackToken
        self.room = room
        self.seq = seq
        self.name = name
        self.payloadJSON = payloadJSON
        self.createdAt = createdAt
    }

    /// The id clients resume from (`evt_42`); unique within the room.
    public var eventID: String? { seq.map { "evt_\($0)" } }

    /// Parses `evt_42` (or a bare `42`) back to a sequence number.
    public static func seq(fromEventID id: String) -> Int64? {
        let digits = id.hasPrefix("evt_") ? id.dropFirst(4) : Substring(id)
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(\.isASCII) else { return nil }
        return Int64(digits).flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// The answer to "what did I miss in this room since event N".
public enum ReplayResult: Sendable, Equatable {
    /// Every event after N, in order (possibly none).
    case recovered([RealtimeEvent])
    /// Some of the missed events are no longer kept (or N is from the future): the client
    /// must refetch state over REST. Never a partial replay.
    case unavailable
}
