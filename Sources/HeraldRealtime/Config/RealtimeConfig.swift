import HeraldCore

/// The realtime gateway: Socket.IO at `/socket.io/` and the native WebSocket protocol at
/// `/api/v1/realtime`.
public struct RealtimeConfig: ConfigSection, Sendable, Equatable {
    public var pingIntervalMs = 25_000
    public var pingTimeoutMs = 20_000
    /// Largest message a client may send, in bytes.
    public var maxPayload = 1_000_000
    /// Largest message a WebSocket peer may send before it authenticated (a Socket.IO
    /// CONNECT with its token fits easily): anyone may open a Socket.IO WebSocket.
    public var unauthenticatedMaxPayload = 16_384
    /// A message begun (a partial frame, or fragments without the last) must be complete
    /// within this time, or the WebSocket is closed (1008): no connection holds a buffer idle.
    public var partialMessageTimeoutMs = 10_000
    /// Outbound bytes queued for one client before it is disconnected as a slow consumer.
    public var outboundLimitBytes = 1_048_576
    /// A Socket.IO client must CONNECT to a namespace within this time.
    public var connectTimeoutMs = 45_000
    /// How long after a disconnect a client may recover its session and missed events.
    public var recoveryWindowSeconds = 120
    /// Socket.IO namespaces besides "/".
    public var namespaces: [String] = []
    /// Refuse realtime connections without a valid token.
    public var requireAuth = true
    /// History kept for replay: events younger than this…
    public var historyRetentionSeconds = 600
    /// …and at most this many per room.
    public var historyMaxPerRoom = 1000
    /// Client messages per second on one connection (bursts of the same size).
    public var clientMessagesPerSecond = 10
    /// Channels one connection may follow at once (its own user room aside): every channel
    /// followed costs the node work at every update of it.
    public var maxChannelsPerConnection = 100

    public init() {}

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("realtime")
        checks.check((10...3_600_000).contains(pingIntervalMs), "ping_interval_ms", "must be between 10 and 3600000")
        checks.check((10...3_600_000).contains(pingTimeoutMs), "ping_timeout_ms", "must be between 10 and 3600000")
        checks.check((1024...100_000_000).contains(maxPayload), "max_payload", "must be between 1 KiB and 100 MB")
        // Above max_payload it is harmless: the smaller of the two applies.
        checks.check(unauthenticatedMaxPayload >= 1024, "unauthenticated_max_payload", "must be at least 1 KiB")
        checks.check((100...600_000).contains(partialMessageTimeoutMs), "partial_message_timeout_ms", "must be between 100 and 600000")
        checks.check(outboundLimitBytes >= 1024, "outbound_limit_bytes", "must be at least 1 KiB")
        checks.check(connectTimeoutMs >= 10, "connect_timeout_ms", "must be at least 10")
        checks.check(recoveryWindowSeconds >= 0, "recovery_window_seconds", "must not be negative")
        checks.check(historyRetentionSeconds >= recoveryWindowSeconds, "history_retention_seconds", "must be at least the recovery window")
        checks.check(historyMaxPerRoom >= 1, "history_max_per_room", "must be positive")
        checks.check(clientMessagesPerSecond >= 1, "client_messages_per_second", "must be positive")
        checks.check((1...100_000).contains(maxChannelsPerConnection), "max_channels_per_connection", "must be between 1 and 100000")
        for namespace in namespaces {
            checks.check(
                namespace.hasPrefix("/") && namespace.count <= 100 && !namespace.contains(","), "namespaces",
                "\(namespace) must start with / and contain no comma")
        }
        return checks.errors
    }
}
