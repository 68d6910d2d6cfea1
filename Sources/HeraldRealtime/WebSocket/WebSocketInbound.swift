import NIOCore

/// What a served WebSocket does with each frame it reads, as a value: fragments joined into
/// messages, pings answered, a close echoed, and every protocol violation turned into its
/// close code. The NIO handler (`WebSocketConnectionHandler`) only reads bytes into frames
/// and carries out the returned action.
///
/// Why apart from the handler: these rules are RFC 6455's and the peer's limits, and they are
/// tested frame by frame without a socket or an event loop (swift-nio's own protocol handlers
/// are state machines that return actions the same way).
struct WebSocketInbound {
    /// What the handler does next.
    enum Action: Equatable {
        /// A whole message for the receiver.
        case deliver(InboundFrame)
        /// Answer a ping with this payload.
        case pong(ByteBuffer)
        /// Send a close frame with this code and close the connection.
        case close(code: UInt16)
        /// Nothing now (a fragment kept, a pong received).
        case none
    }

    private let limits: WebSocketLimits
    /// A message arriving in fragments: its opcode and what came so far.
    private var fragments: (opcode: UInt8, data: ByteBuffer)?
    /// The receiver said the peer authenticated: the full message size applies from now on.
    private var trusted = false

    init(limits: WebSocketLimits) {
        self.limits = limits
    }

    /// The largest message the peer may send now. Until it authenticated the small limit
    /// applies; the receiver is asked again only when something is larger than that.
    var messageLimit: Int { trusted ? limits.maxMessageBytes : limits.unauthenticatedMaxMessageBytes }

    /// True when a message is waiting for its next fragment.
    var isUnfinished: Bool { fragments != nil }

    /// True when a larger message is allowed after asking whether the peer authenticated.
    mutating func becameTrusted(_ isAuthenticated: () -> Bool) -> Bool {
        guard !trusted, isAuthenticated() else { return false }
        trusted = true
        return true
    }

    /// Drops a message left unfinished (its deadline passed, or the connection ended).
    mutating func releaseUnfinished() {
        fragments = nil
    }

    mutating func received(_ frame: WebSocketFrameReader.Frame, isAuthenticated: () -> Bool) -> Action {
        switch frame.opcode {
        case WebSocketWire.text, WebSocketWire.binary:
            guard fragments == nil else { return violation(1002) }
            if frame.fin { return message(frame.opcode, frame.payload) }
            fragments = (frame.opcode, frame.payload)
            return .none
        case WebSocketWire.continuation:
            guard case (let opcode, var data)? = fragments else { return violation(1002) }
            fragments = nil
            var more = frame.payload
            let size = data.readableBytes + more.readableBytes
            guard size <= messageLimit || (becameTrusted(isAuthenticated) && size <= messageLimit) else { return violation(1009) }
            data.writeBuffer(&more)
            if frame.fin { return message(opcode, data) }
            fragments = (opcode, data)
            return .none
        case WebSocketWire.ping:
            return .pong(frame.payload)
        case WebSocketWire.close:
            // Answer with the client's code (RFC 6455 §5.5.1), then close.
            var data = frame.payload
            return .close(code: data.readableBytes >= 2 ? data.readInteger(as: UInt16.self) ?? 1000 : 1000)
        default:
            return .none  // pong
        }
    }

    private func message(_ opcode: UInt8, _ data: ByteBuffer) -> Action {
        guard opcode == WebSocketWire.text else { return .deliver(.binary(Array(data.readableBytesView))) }
        guard let text = String(validating: data.readableBytesView, as: UTF8.self) else { return .close(code: 1007) }
        return .deliver(.text(text))
    }

    private mutating func violation(_ code: UInt16) -> Action {
        fragments = nil
        return .close(code: code)
    }
}
