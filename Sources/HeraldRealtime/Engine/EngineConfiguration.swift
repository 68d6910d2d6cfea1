/// Engine.IO v4 settings, sent to clients in the handshake.
public struct EngineConfiguration: Sendable {
    public var pingInterval: Duration = .milliseconds(25_000)
    public var pingTimeout: Duration = .milliseconds(20_000)
    /// Largest payload a client may send (a polling POST body or a WebSocket message).
    public var maxPayload = 1_000_000
    /// Outbound bytes queued for one client before it is dropped as a slow consumer.
    public var outboundLimitBytes = 1_048_576
    /// How long a polling client may take to finish an upgrade to WebSocket.
    public var upgradeTimeout: Duration = .milliseconds(10_000)
    /// How often the heartbeat sweep looks at sessions (pings, pong and connect timeouts).
    public var sweepInterval: Duration = .milliseconds(250)
    public var allowPolling = true
    public var allowWebSocket = true

    public init() {}

    var pingIntervalMilliseconds: Int64 { Self.milliseconds(pingInterval) }
    var pingTimeoutMilliseconds: Int64 { Self.milliseconds(pingTimeout) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.wholeMilliseconds
    }
}
