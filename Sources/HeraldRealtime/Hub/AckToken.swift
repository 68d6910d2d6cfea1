/// An event's request to be acknowledged, and whose acknowledgement it is.
///
/// Why a type and not the id alone: the hub hands each acknowledgement to the one owner of
/// its kind (`RealtimeHub.onAcknowledge(_:_:)`), so no module tells its acks from another's
/// by looking at the id's text. The kind travels with the token: in the event, in each
/// connection's list of acks it waits for, and between nodes.
public struct AckToken: Hashable, Sendable {
    /// Who records an acknowledgement. A module declares its own kind (the notifications
    /// module's `.delivery`) as an extension, the way modules add `ErrorCode`s.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The hub's own: a publisher waiting for the first acknowledgement
        /// (`RealtimeHub.publish(_:payload:to:persist:ackTimeout:)`), on whichever node.
        public static let publisher = Kind(rawValue: "publisher")
    }

    public let kind: Kind
    /// What the client sees and sends back (`ack_id`), unique across kinds.
    public let id: String

    public init(_ kind: Kind, id: String) {
        self.kind = kind
        self.id = id
    }
}
