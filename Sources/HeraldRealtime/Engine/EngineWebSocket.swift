import NIOCore
import Synchronization

/// One Engine.IO WebSocket: a session of its own, or a polling session taking the WebSocket
/// over (the `2probe` → `3probe` → `5` exchange).
///
/// Frames arrive on the transport's event loop. Pongs and the probe are handled right there;
/// packets for the upper layer go through a `SerialMailbox`, so Socket.IO sees them in order
/// and a connection that is only waiting holds no task.
final class EngineWebSocket: WebSocketReceiver {
    private enum Phase {
        case refused
        case upgrading(EngineSession)
        case open(EngineSession)
        case closed
    }

    private enum Work: Sendable {
        case opened(EngineSession)
        case packet(EngineSession, EnginePacket)
        case close(EngineSession, EngineCloseReason)
    }

    /// Packets waiting for the upper layer before the socket stops being read.
    static let backlogLimit = 64

    private let engine: EngineServer
    private let transport: any WebSocketTransport
    private let phase: Mutex<Phase>
    private let mailbox: SerialMailbox<Work>

    private init(engine: EngineServer, transport: any WebSocketTransport, phase: Phase) {
        self.engine = engine
        self.transport = transport
        self.phase = Mutex(phase)
        // The transport strongly, on purpose: a weak reference would give it a side table, and
        // every retain of it (one per broadcast member) would then be an out-of-line atomic on
        // another cache line. The cycle this closes (transport → handler → receiver → mailbox)
        // ends when the connection does: the handler drops its receiver.
        mailbox = SerialMailbox(limit: Self.backlogLimit) { paused in transport.setReadingPaused(paused) }
    }

    convenience init(engine: EngineServer, transport: any WebSocketTransport, refused: Void) {
        self.init(engine: engine, transport: transport, phase: .refused)
    }

    convenience init(engine: EngineServer, transport: any WebSocketTransport, upgrading session: EngineSession) {
        self.init(engine: engine, transport: transport, phase: .upgrading(session))
    }

    /// A new session: the upper layer is told before any of its packets.
    convenience init(engine: EngineServer, transport: any WebSocketTransport, opened session: EngineSession) {
        self.init(engine: engine, transport: transport, phase: .open(session))
        post(.opened(session))
    }

    private func post(_ work: Work) {
        let engine = self.engine
        mailbox.post(work) { work in
            switch work {
            case .opened(let session):
                await engine.didOpen(session)
            case .packet(let session, let packet):
                if !(await session.receive(packet, now: engine.now)) {
                    await engine.close(session, reason: .parseError)
                }
            case .close(let session, let reason):
                await engine.close(session, reason: reason)
            }
        }
    }

    // MARK: WebSocketReceiver

    /// Once one of the session's namespaces connected with a verified identity.
    var isAuthenticated: Bool {
        phase.withLock { phase in
            switch phase {
            case .open(let session), .upgrading(let session): session.isAuthenticated
            case .refused, .closed: false
            }
        }
    }

    func received(_ frame: InboundFrame) {
        switch phase.withLock({ $0 }) {
        case .refused, .closed:
            return
        case .upgrading(let session):
            probe(frame, session)
        case .open(let session):
            let packet: EnginePacket
            switch frame {
            case .text(let text):
                guard text.utf8.count <= engine.configuration.maxPayload, let decoded = try? EngineCodec.decode(text: Substring(text)) else {
                    fail(session, .parseError)
                    return
                }
                packet = decoded
            case .binary(let bytes):
                guard bytes.count <= engine.configuration.maxPayload else {
                    fail(session, .parseError)
                    return
                }
                packet = EngineCodec.decode(binaryFrame: bytes)
            }
            if case .pong = packet {
                session.receivedPong(now: engine.now)
            } else {
                post(.packet(session, packet))
            }
        }
    }

    /// Stops taking frames and has the session closed (after what is already queued).
    private func fail(_ session: EngineSession, _ reason: EngineCloseReason) {
        phase.withLock { $0 = .closed }
        post(.close(session, reason))
    }

    /// The upgrade probe: `2probe` → `3probe`, then `5`. A poll that is waiting is released
    /// with a noop if `5` does not follow within 50 ms (as the reference server's 100 ms check
    /// does); when `5` comes first, the poll is answered 400 instead, because the session has
    /// moved to the WebSocket.
    private func probe(_ frame: InboundFrame, _ session: EngineSession) {
        guard case .text(let text) = frame, let packet = try? EngineCodec.decode(text: Substring(text)) else {
            abandon(session)
            return
        }
        switch packet {
        case .ping("probe"):
            transport.sendNow(.text(EngineCodec.encodeText(.pong("probe"))))
            transport.eventLoop.scheduleTask(in: .milliseconds(50)) {
                if session.isUpgrading, session.isPollInFlight { session.send(.noop) }
            }
        case .upgrade:
            session.completeUpgrade()
            phase.withLock { $0 = .open(session) }
            transport.attach(session.queue)
        case .noop:
            break
        default:
            abandon(session)
        }
    }

    private func abandon(_ session: EngineSession) {
        session.abandonUpgrade()
        phase.withLock { $0 = .closed }
        transport.close()
    }

    func outboundFinished(_ reason: OutboundQueue.CloseReason) {
        // The queue closes when the session does; only an overflow still has to close it.
        guard reason == .slowConsumer, case .open(let session) = phase.withLock({ $0 }) else { return }
        fail(session, .slowConsumer)
    }

    func transportClosed(error: Bool) {
        let previous = phase.withLock { phase -> Phase in
            defer { phase = .closed }
            return phase
        }
        switch previous {
        case .upgrading(let session): session.abandonUpgrade()
        case .open(let session): post(.close(session, error ? .transportError : .transportClose))
        case .refused, .closed: break
        }
    }

    func shouldQuiesce() {
        switch phase.withLock({ $0 }) {
        case .open(let session): fail(session, .serverShutdown)
        case .upgrading(let session): abandon(session)
        case .refused, .closed: transport.close()
        }
    }
}
