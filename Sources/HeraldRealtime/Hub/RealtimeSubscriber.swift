/// A connection as the hub sees it: something that takes events for the rooms it joined.
///
/// Why a protocol: Socket.IO and native WebSocket connections format events differently,
/// but join rooms, count towards presence and receive broadcasts the same way.
public protocol RealtimeSubscriber: AnyObject, Sendable {
    var connectionID: UInt64 { get }
    /// The authenticated user, if any (presence counts only these).
    var userID: String? { get }
    /// A client's connection (counted in `connectionCount` and the connections gauge), not a
    /// server-side follower of rooms such as the trip tracker.
    var isClientConnection: Bool { get }
    /// Whether the client acknowledges deliveries that ask for it (`DeliveryAcks`); one that
    /// said it does not is sent them without an ack request, and a delivery counts as
    /// acknowledged once handed to it.
    var acknowledgesDeliveries: Bool { get }
    /// Hands an event to the connection's outbound queue. Must never block or suspend: a
    /// broadcast calls it for every member in turn.
    func deliver(_ event: RealtimeEvent)
    /// The same within a broadcast: frames identical to another member's may be reused.
    func deliver(_ event: RealtimeEvent, sharing frames: BroadcastFrames)
}

/// A connection that can be put into a room by the server (Socket.IO sockets: their rooms are
/// the server's to manage). Native connections choose their channels themselves and are not.
public protocol RoomFollower: RealtimeSubscriber {
    /// Starts receiving `room`'s events published after sequence `base`. Must not suspend.
    func follow(_ room: String, after base: Int64)
}

/// The frames one broadcast has built so far, shared by its members.
///
/// Why: the members of a room mostly get byte-identical frames (same event, same recovery
/// offset), so the first member's frame text is reused by the next ones instead of being
/// built again 10,000 times. Keyed by what makes frames differ: the protocol or namespace,
/// and the recovery offset.
///
/// `@unchecked Sendable`: a `BroadcastFrames` is created by one fan-out, used only inside it
/// (members are called one after another; the fan-out may resume on another thread after a
/// yield, but never runs two members at once) and never kept by a member, so its mutable
/// state is never touched by two threads at the same time.
public final class BroadcastFrames: @unchecked Sendable {
    private var last: (key: String, offset: String?, frame: String)?

    public init() {}

    /// The frame for `key` at `offset`, built by `make` unless the previous member's was the same.
    public func frame(for key: String, offset: String? = nil, _ make: () -> String) -> String {
        if let last, last.key == key, last.offset == offset { return last.frame }
        let made = make()
        last = (key, offset, made)
        return made
    }
}

extension RealtimeSubscriber {
    public var isClientConnection: Bool { true }
    public var acknowledgesDeliveries: Bool { true }

    /// Hands an event of a broadcast over, reusing frames other members already built.
    public func deliver(_ event: RealtimeEvent, sharing frames: BroadcastFrames) {
        deliver(event)
    }
}
