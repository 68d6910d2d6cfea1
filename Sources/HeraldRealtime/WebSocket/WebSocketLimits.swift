import HeraldCore
import NIOCore

/// What one WebSocket peer may make the server hold while a message comes in.
///
/// Why two sizes: `/socket.io/` upgrades without a token (Socket.IO authenticates in its
/// CONNECT packet), so until the peer proved who it is, a message may be only as large as
/// that CONNECT needs; afterwards up to `realtime.max_payload`. Why a deadline: a message
/// begun and never finished (a partial frame, fragments without the last) would otherwise
/// keep its buffer for as long as the peer keeps the connection open.
public struct WebSocketLimits: Sendable, Equatable {
    public var maxMessageBytes: Int
    public var unauthenticatedMaxMessageBytes: Int
    public var partialMessageTimeout: TimeAmount
    /// How long a new connection may take to send its first request head (`server.request_head_timeout_ms`).
    public var requestHeadTimeout: TimeAmount

    public init(
        maxMessageBytes: Int, unauthenticatedMaxMessageBytes: Int, partialMessageTimeout: TimeAmount,
        requestHeadTimeout: TimeAmount = .seconds(60)
    ) {
        self.maxMessageBytes = maxMessageBytes
        self.unauthenticatedMaxMessageBytes = min(unauthenticatedMaxMessageBytes, maxMessageBytes)
        self.partialMessageTimeout = partialMessageTimeout
        self.requestHeadTimeout = requestHeadTimeout
    }

    /// - Parameter requestHeadTimeoutMs: the server section's `request_head_timeout_ms`.
    public init(_ config: RealtimeConfig, requestHeadTimeoutMs: Int) {
        self.init(
            maxMessageBytes: config.maxPayload, unauthenticatedMaxMessageBytes: config.unauthenticatedMaxPayload,
            partialMessageTimeout: .milliseconds(Int64(config.partialMessageTimeoutMs)),
            requestHeadTimeout: .milliseconds(Int64(requestHeadTimeoutMs)))
    }
}
