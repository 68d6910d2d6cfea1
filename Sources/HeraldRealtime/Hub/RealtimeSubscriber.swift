/// A connection as the hub sees it: something that takes events for the rooms it joined.
///
/// Why a protocol: Socket.IO and native WebSocket connections format events differently,
/// but join rooms, count towards presence and receive broadcasts the same way.
public protocol RealtimeSubscriber: AnyObject, Sendable {
    var connectionID: UInt64 { get }
    /// The authenticated user, if any (presence counts only these).
    var userID: String? { get }
    /// Hands an event to the connection's outbound queue. Must never block or suspend: a
    /// broadcast calls it for every member in turn.
    func deliver(_ event: RealtimeEvent)
}

/// A connection that can be put into a room by the server (Socket.IO sockets: their rooms are
/// the server's to manage). Native connections choose their channels themselves and are not.
public protocol RoomFollower: RealtimeSubscriber {
    /// Starts receiving `room`'s events published after sequence `base`. Must not suspend.
    func follow(_ room: String, after base: Int64)
}
