import Foundation
import HeraldAuth
import HeraldCore
import Synchronization

/// The Socket.IO side of one Engine.IO session: decodes packets, connects namespaces and
/// routes events, acks and disconnects to the right socket.
final class SocketIOClient: EngineSessionDelegate {
    private struct State {
        var decoder = SocketPacketDecoder()
        var sockets: [String: SocketIOSocket] = [:]
    }

    private let state = Mutex(State())
    let server: SocketIOServer
    let session: EngineSession

    init(server: SocketIOServer, session: EngineSession) {
        self.server = server
        self.session = session
    }

    func engineSession(_ session: EngineSession, didReceiveText text: String) async {
        server.hub.counters.add(.messagesIn)
        let decoded: Result<SocketPacket?, SocketProtocolError> = state.withLock { state in
            Result { () throws(SocketProtocolError) -> SocketPacket? in try state.decoder.decode(text: text) }
        }
        await handle(decoded)
    }

    func engineSession(_ session: EngineSession, didReceiveBinary bytes: [UInt8]) async {
        let decoded: Result<SocketPacket?, SocketProtocolError> = state.withLock { state in
            Result { () throws(SocketProtocolError) -> SocketPacket? in try state.decoder.add(attachment: bytes) }
        }
        await handle(decoded)
    }

    private func handle(_ decoded: Result<SocketPacket?, SocketProtocolError>) async {
        switch decoded {
        case .failure:
            // A malformed packet ends the whole connection.
            await close()
        case .success(nil):
            break
        case .success(let packet?):
            await handle(packet)
        }
    }

    private func close() async {
        await session.close(.parseError)
    }

    func engineSessionDidClose(_ session: EngineSession, reason: EngineCloseReason) async {
        let sockets = state.withLock { state -> [SocketIOSocket] in
            defer { state.sockets = [:] }
            return Array(state.sockets.values)
        }
        let now = server.hub.clock.now().epochMilliseconds
        for socket in sockets {
            server.tokenExpiry.forget(socket)
            let rooms = socket.closed()
            guard server.configuration.recoveryEnabled else { continue }
            // A client that closed on purpose will not come back for it.
            guard reason != .clientClose else {
                server.sessions.forget(pid: socket.pid)
                continue
            }
            // A transport loss may be followed by a recovery; save what it needs.
            let saved = RecoverableSession(
                pid: socket.pid, socketID: socket.id, userID: socket.userID, namespace: socket.namespace,
                rooms: rooms, disconnectedAt: now)
            do {
                // Bounded: a shutdown with the database gone must not hang. Saves that arrive
                // together are written together (RecoverableSessionStore).
                let sessions = server.sessions
                let bound: Duration = reason == .serverShutdown ? .seconds(2) : .seconds(60)
                try await withDeadline(bound) { try await sessions.save(saved) }
            } catch {
                server.logger.warning("saving a recoverable session failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    private func socket(_ namespace: String) -> SocketIOSocket? {
        state.withLock { $0.sockets[namespace] }
    }

    private func handle(_ packet: SocketPacket) async {
        switch packet.type {
        case .connect:
            await connect(packet)
        case .disconnect:
            guard let socket = state.withLock({ $0.sockets.removeValue(forKey: packet.namespace) }) else {
                await close()
                return
            }
            server.tokenExpiry.forget(socket)
            socket.closed()
            if server.configuration.recoveryEnabled { server.sessions.forget(pid: socket.pid) }
        case .event, .binaryEvent:
            // Events for a namespace the client has not joined break the protocol.
            guard let socket = socket(packet.namespace), case .array(let values)? = packet.data,
                case .string(let name)? = values.first
            else {
                await close()
                return
            }
            let arguments = Array(values.dropFirst())
            var ack: SocketIOAck?
            if let id = packet.id {
                let namespace = packet.namespace
                ack = SocketIOAck { reply in
                    socket.send(SocketPacket(type: .ack, namespace: namespace, id: id, data: .array(reply)))
                }
            }
            if let handler = server.eventHandler(packet.namespace, name) {
                await handler(socket, arguments, ack)
            }
        case .ack, .binaryAck:
            guard let socket = socket(packet.namespace), let id = packet.id, case .array(let values)? = packet.data else {
                await close()
                return
            }
            await socket.received(ack: id, arguments: values)
        case .connectError:
            // Only servers send CONNECT_ERROR.
            await close()
        }
    }

    private func refuse(_ namespace: String, _ message: String) {
        let (text, _) = SocketPacketEncoder.encode(
            SocketPacket(type: .connectError, namespace: namespace, data: .object(["message": .string(message)])))
        session.sendMessage(text)
    }

    private func connect(_ packet: SocketPacket) async {
        let namespace = packet.namespace
        guard server.configuration.namespaces.contains(namespace) else {
            refuse(namespace, "Invalid namespace")
            return
        }
        if socket(namespace) != nil {
            // CONNECT twice to one namespace breaks the protocol.
            await close()
            return
        }
        if let data = packet.data, case .object = data {
        } else if packet.data != nil {
            await close()
            return
        }
        let identity: Identity?
        switch await server.authenticate(auth: packet.data, query: session.handshakeQuery) {
        case .refused(let message):
            refuse(namespace, message)
            return
        case .accepted(let verified):
            identity = verified
            if verified != nil { session.markAuthenticated() }
        }

        // Connection state recovery: {pid, offset} from a client that held a session.
        var recovered: (session: RecoverableSession, replay: SocketIOSocket.Replay)?
        let socket: SocketIOSocket
        if server.configuration.recoveryEnabled, case .object(let auth)? = packet.data, case .string(let pid)? = auth["pid"],
            case .string(let offset)? = auth["offset"], let offsets = Self.parseOffset(offset)
        {
            let notBefore = server.hub.clock.now().epochMilliseconds - EngineConfiguration.milliseconds(server.configuration.recoveryWindow)
            if let saved = try? await server.sessions.take(
                pid: pid, userID: identity?.userID, namespace: namespace, notBefore: notBefore),
                offsets.count <= saved.rooms.count
            {
                let candidate = SocketIOSocket(
                    connectionID: server.nextConnectionID(), id: saved.socketID, pid: saved.pid, namespace: namespace,
                    identity: identity, recovered: true, session: session, hub: server.hub, offsets: true, auth: packet.data,
                    sessions: server.sessions)
                server.hub.register(candidate)
                if let replay = try? await candidate.restore(saved.rooms, offsets: offsets) {
                    recovered = (saved, replay)
                    socket = candidate
                    server.hub.counters.add(.recoveries)
                } else {
                    server.hub.counters.add(.recoveriesFailed)
                    candidate.closed()
                    server.sessions.forget(pid: candidate.pid)
                    socket = await freshSocket(namespace: namespace, identity: identity, auth: packet.data)
                }
            } else {
                server.hub.counters.add(.recoveriesFailed)
                socket = await freshSocket(namespace: namespace, identity: identity, auth: packet.data)
            }
        } else {
            socket = await freshSocket(namespace: namespace, identity: identity, auth: packet.data)
        }

        state.withLock { $0.sockets[namespace] = socket }
        server.tokenExpiry.track(socket)
        session.setDeadline(nil)
        var reply: [String: SocketValue] = ["sid": .string(socket.id)]
        if server.configuration.recoveryEnabled { reply["pid"] = .string(socket.pid) }
        let (text, _) = SocketPacketEncoder.encode(SocketPacket(type: .connect, namespace: namespace, data: .object(reply)))
        session.sendMessage(text)
        if let recovered { socket.sendReplayed(recovered.replay) }
        await letTheAcknowledgementGoFirst()
        for handler in server.connectHandlers(namespace) {
            await handler(socket)
        }
        // Rooms joined so far are written as they were joined; a socket with none (no user)
        // and a recovered one are written here.
        socket.persist()
    }

    /// Clients attach their event listeners when they see the CONNECT reply; a frame that
    /// reaches them in the same read as that reply can be missed (the official test suite's
    /// client does exactly this). So, as the reference server's write-drain cycle does, the
    /// connect handlers' first frames go out after the reply has been written. Long-polling
    /// delivers whole payloads and needs no such care.
    private func letTheAcknowledgementGoFirst() async {
        guard session.transport == .websocket else { return }
        for _ in 0..<20 where !session.queue.isEmpty {
            try? await CancellableSleep.sleep(for: .milliseconds(1))
        }
        try? await CancellableSleep.sleep(for: .milliseconds(1))
    }

    private func freshSocket(namespace: String, identity: Identity?, auth: SocketValue?) async -> SocketIOSocket {
        let socket = SocketIOSocket(
            connectionID: server.nextConnectionID(), id: Identifier.make("", length: 20).replacingOccurrences(of: "_", with: ""),
            pid: Identifier.make("", length: 22).replacingOccurrences(of: "_", with: ""), namespace: namespace,
            identity: identity, recovered: false, session: session, hub: server.hub,
            offsets: server.configuration.recoveryEnabled, auth: auth,
            sessions: server.configuration.recoveryEnabled ? server.sessions : nil)
        server.hub.register(socket)
        if let identity {
            do {
                try await socket.join(RoomName.user(identity.userID))
            } catch {
                server.logger.error("joining the user room failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        return socket
    }

    /// `"12.0.7"` → [12, 0, 7]; nil when it is not an offset Herald issued.
    static func parseOffset(_ text: String) -> [Int64]? {
        guard text.utf8.count <= 4096 else { return nil }
        if text.isEmpty { return [] }
        var values: [Int64] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard let value = Int64(part), value >= 0 else { return nil }
            values.append(value)
        }
        return values
    }
}
