import Foundation
import HeraldCore
import Synchronization

/// What a session's upper layer (Socket.IO) is told.
public protocol EngineSessionDelegate: AnyObject, Sendable {
    func engineSession(_ session: EngineSession, didReceiveText text: String) async
    func engineSession(_ session: EngineSession, didReceiveBinary bytes: [UInt8]) async
    func engineSessionDidClose(_ session: EngineSession, reason: EngineCloseReason) async
}

public enum EngineCloseReason: String, Sendable, Equatable {
    case transportClose = "transport close"
    case transportError = "transport error"
    case pingTimeout = "ping timeout"
    case parseError = "parse error"
    case forcedClose = "forced close"
    case clientClose = "client close"
    case slowConsumer = "slow consumer"
    case serverShutdown = "server shutting down"
}

/// One Engine.IO connection, whichever transport carries it.
///
/// Why the outbound side is one queue of encoded packets: long-polling drains it into
/// payloads and WebSocket writes it frame by frame, so an upgrade from polling to
/// WebSocket switches the reader of the queue without losing or reordering a packet.
public final class EngineSession: Sendable {
    public enum Transport: String, Sendable {
        case polling
        case websocket
    }

    struct State {
        var transport: Transport
        var upgrading = false
        var pollInFlight = false
        var postInFlight = false
        var closed = false
        var closeReason: EngineCloseReason?
        var nextPingAt: Int64
        var pingSentAt: Int64?
        var upgradeDeadline: Int64?
        /// Set by the upper layer (e.g. Socket.IO's connect timeout); passing it closes the session.
        var upperDeadline: Int64?
    }

    public let sid: String
    public let queue: OutboundQueue
    /// Query and headers of the opening request, for the upper layer's auth.
    public let handshakeQuery: [String: String]
    private let state: Mutex<State>
    private let delegateBox = Mutex<(any EngineSessionDelegate)?>(nil)
    private let authenticated = Atomic<Bool>(false)

    /// Whether the upper layer verified who the peer is (a namespace connected with a valid
    /// token): only then may its messages be as large as `realtime.max_payload`.
    public var isAuthenticated: Bool { authenticated.load(ordering: .relaxed) }

    public func markAuthenticated() { authenticated.store(true, ordering: .relaxed) }

    let pingInterval: Int64

    init(sid: String, transport: Transport, query: [String: String], outboundLimit: Int, now: Int64, pingInterval: Int64) {
        self.sid = sid
        self.pingInterval = pingInterval
        handshakeQuery = query
        queue = OutboundQueue(limitBytes: outboundLimit)
        state = Mutex(State(transport: transport, nextPingAt: now + pingInterval))
    }

    public var delegate: (any EngineSessionDelegate)? {
        get { delegateBox.withLock { $0 } }
        set { delegateBox.withLock { $0 = newValue } }
    }

    public var transport: Transport { state.withLock { $0.transport } }
    var isUpgrading: Bool { state.withLock { $0.upgrading } }
    var closeReason: EngineCloseReason? { state.withLock { $0.closeReason } }

    /// True when a ping went unanswered past the timeout: requests check this themselves so
    /// the answer does not depend on when the sweep last ran.
    func isPongOverdue(now: Int64, pingTimeout: Int64) -> Bool {
        state.withLock { state in
            if let sent = state.pingSentAt { return now >= sent + pingTimeout }
            return now >= state.nextPingAt + pingTimeout
        }
    }
    public var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: Sending

    /// Queues a packet for the client; false if the session is closed or overflowed.
    @discardableResult
    public func send(_ packet: EnginePacket) -> Bool {
        switch packet {
        case .binary(let bytes): return queue.enqueue(.binary(bytes))
        default: return queue.enqueue(.text(EngineCodec.encodeText(packet)))
        }
    }

    /// Queues a Socket.IO-level text message (`4` + text) without building an `EnginePacket`.
    @discardableResult
    public func sendMessage(_ text: String) -> Bool {
        queue.enqueue(.text("4" + text))
    }

    @discardableResult
    public func sendBinary(_ bytes: [UInt8]) -> Bool {
        queue.enqueue(.binary(bytes))
    }

    // MARK: Receiving

    /// Handles one packet from the client. Returns false when the packet broke the protocol
    /// (the caller then closes the session with `.parseError`).
    func receive(_ packet: EnginePacket, now: Int64) async -> Bool {
        switch packet {
        case .pong:
            receivedPong(now: now)
            return true
        case .message(let text):
            await delegate?.engineSession(self, didReceiveText: text)
            return true
        case .binary(let bytes):
            await delegate?.engineSession(self, didReceiveBinary: bytes)
            return true
        case .close:
            await close(.clientClose)
            return true
        case .noop:
            return true
        case .ping, .open, .upgrade:
            // v4 clients never send these outside an upgrade probe (handled by the transport).
            return false
        }
    }

    /// The client answered a ping: the next one is due one interval from now.
    func receivedPong(now: Int64) {
        state.withLock { state in
            state.pingSentAt = nil
            state.nextPingAt = now + pingInterval
        }
    }

    // MARK: Transport bookkeeping

    enum PollStart: Equatable {
        case ok
        case concurrent
        case wrongTransport
        case closed
    }

    func beginPoll() -> PollStart {
        state.withLock { state in
            if state.closed { return .closed }
            if state.transport != .polling { return .wrongTransport }
            if state.pollInFlight { return .concurrent }
            state.pollInFlight = true
            return .ok
        }
    }

    func endPoll() {
        state.withLock { $0.pollInFlight = false }
    }

    func beginPost() -> PollStart {
        state.withLock { state in
            if state.closed { return .closed }
            if state.transport != .polling { return .wrongTransport }
            if state.postInFlight { return .concurrent }
            state.postInFlight = true
            return .ok
        }
    }

    func endPost() {
        state.withLock { $0.postInFlight = false }
    }

    /// A WebSocket wants to take over this polling session.
    func beginUpgrade(deadline: Int64) -> Bool {
        state.withLock { state in
            guard !state.closed, state.transport == .polling, !state.upgrading else { return false }
            state.upgrading = true
            state.upgradeDeadline = deadline
            return true
        }
    }

    /// The client sent `5` (upgrade) over the WebSocket: it is now the transport.
    func completeUpgrade() {
        state.withLock { state in
            state.transport = .websocket
            state.upgrading = false
            state.upgradeDeadline = nil
        }
        // A noop meant to release a poll must not reach the WebSocket; a poll still waiting
        // is woken to be told the session moved.
        queue.removeAll { $0 == .text("6") }
        queue.wakeReaders()
    }

    var isPollInFlight: Bool { state.withLock { $0.pollInFlight } }

    func abandonUpgrade() {
        state.withLock { state in
            state.upgrading = false
            state.upgradeDeadline = nil
        }
    }

    /// The upper layer's deadline (e.g. "CONNECT must arrive by then"); nil clears it.
    public func setDeadline(_ milliseconds: Int64?) {
        state.withLock { $0.upperDeadline = milliseconds }
    }

    enum SweepAction: Equatable {
        case none
        /// Closed already (by an upper layer or the transport): the sweep drops it from the table.
        case closed
        case ping
        case timeout
        case upgradeTimeout
        case deadline
    }

    /// Called by the heartbeat sweep: decides whether to ping, or to give up on the client.
    func sweep(now: Int64, pingInterval: Int64, pingTimeout: Int64) -> SweepAction {
        state.withLock { state in
            if state.closed { return .closed }
            if let deadline = state.upperDeadline, now >= deadline {
                state.upperDeadline = nil
                return .deadline
            }
            if let deadline = state.upgradeDeadline, now >= deadline {
                state.upgrading = false
                state.upgradeDeadline = nil
                return .upgradeTimeout
            }
            if let sent = state.pingSentAt {
                return now >= sent + pingTimeout ? .timeout : .none
            }
            if now >= state.nextPingAt {
                // Measured from when the ping was due, not when the sweep got to it, so the
                // pong deadline is exact whatever the sweep's granularity.
                state.pingSentAt = state.nextPingAt
                return .ping
            }
            return .none
        }
    }

    /// Closes the session once; the delegate is told why.
    public func close(_ reason: EngineCloseReason) async {
        let first = state.withLock { state -> Bool in
            if state.closed { return false }
            state.closed = true
            state.closeReason = reason
            return true
        }
        guard first else { return }
        if reason == .forcedClose || reason == .serverShutdown {
            // Tell the client, then let the transport flush the close packet.
            send(.close)
        }
        queue.close(reason == .slowConsumer ? .slowConsumer : .closed)
        await delegate?.engineSessionDidClose(self, reason: reason)
        delegate = nil
    }
}
