/// Socket.IO v5 settings on top of Engine.IO.
public struct SocketIOConfiguration: Sendable {
    /// Namespaces clients may connect to; CONNECT to any other is refused.
    public var namespaces: Set<String> = ["/"]
    /// A connection that sends no CONNECT in this time is closed.
    public var connectTimeout: Duration = .seconds(45)
    /// Refuse CONNECT without a valid token (`auth.token`, or `?token=` for older clients).
    public var requireAuth = true
    /// Connection state recovery (Socket.IO 4.6): the CONNECT reply carries a `pid`, events
    /// carry offsets, and a reconnecting client gets its rooms and missed events back.
    public var recoveryEnabled = true
    /// How long after a disconnect a client may recover its session (rooms and missed events).
    public var recoveryWindow: Duration = .seconds(120)

    public init() {}
}
