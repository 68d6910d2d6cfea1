import Foundation
import HeraldCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A frame received on a WebSocket.
public enum InboundFrame: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// An HTTP answer of the long-polling transport.
public struct EngineHTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: String

    public init(status: Int, contentType: String, body: String) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    static func error(_ code: Int, _ message: String, status: Int = 400) -> EngineHTTPResponse {
        EngineHTTPResponse(
            status: status, contentType: "application/json",
            body: #"{"code":\#(code),"message":"\#(message)"}"#)
    }
}

/// The Engine.IO v4 server: handshakes, the long-polling and WebSocket transports, the
/// upgrade between them, and one heartbeat sweep for every session.
///
/// Why one sweep instead of a timer per session: 10,000 idle sessions cost one loop that
/// looks at each a few times a second, not 10,000 sleeping tasks.
public final class EngineServer: Service, Sendable {
    public let configuration: EngineConfiguration
    let clock: any HeraldClock
    let logger: Logger
    private let sessions = Mutex<[String: EngineSession]>([:])
    /// Gives a new session to the upper layer (which sets itself as the delegate).
    private let onOpen: @Sendable (EngineSession) async -> Void

    /// Where slow-consumer drops are counted (the hub's counters, when there is a hub).
    let counters: RealtimeCounters

    public init(
        configuration: EngineConfiguration, clock: any HeraldClock, logger: Logger, counters: RealtimeCounters = RealtimeCounters(),
        onOpen: @escaping @Sendable (EngineSession) async -> Void
    ) {
        self.counters = counters
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.onOpen = onOpen
    }

    public var sessionCount: Int { sessions.withLock { $0.count } }

    public func session(_ sid: String) -> EngineSession? {
        sessions.withLock { $0[sid] }
    }

    var now: Int64 { clock.now().epochMilliseconds }

    // MARK: Handshake

    func handshake(for session: EngineSession, upgrades: [String]) -> String {
        let list = upgrades.map { "\"\($0)\"" }.joined(separator: ",")
        return
            #"{"sid":"\#(session.sid)","upgrades":[\#(list)],"pingInterval":\#(configuration.pingIntervalMilliseconds),"pingTimeout":\#(configuration.pingTimeoutMilliseconds),"maxPayload":\#(configuration.maxPayload)}"#
    }

    private func openSession(transport: EngineSession.Transport, query: [String: String]) async -> EngineSession {
        let session = makeSession(transport: transport, query: query)
        await onOpen(session)
        return session
    }

    /// A registered session with its `open` packet queued (the upper layer is not told yet).
    private func makeSession(transport: EngineSession.Transport, query: [String: String]) -> EngineSession {
        let session = EngineSession(
            sid: Identifier.make("", length: 20).replacingOccurrences(of: "_", with: ""),
            transport: transport, query: query, outboundLimit: configuration.outboundLimitBytes,
            now: now, pingInterval: configuration.pingIntervalMilliseconds)
        sessions.withLock { $0[session.sid] = session }
        let upgrades = transport == .polling && configuration.allowWebSocket ? ["websocket"] : []
        session.send(.open(handshake(for: session, upgrades: upgrades)))
        return session
    }

    /// Checks the query every Engine.IO request carries; nil when it is acceptable.
    func validate(query: [String: String], transport expected: String?) -> EngineHTTPResponse? {
        guard query["EIO"] == "4" else { return .error(5, "Unsupported protocol version") }
        guard let transport = query["transport"], ["polling", "websocket"].contains(transport) else {
            return .error(0, "Transport unknown")
        }
        if let expected, transport != expected { return .error(3, "Bad request") }
        if transport == "polling" && !configuration.allowPolling { return .error(0, "Transport unknown") }
        if transport == "websocket" && !configuration.allowWebSocket { return .error(0, "Transport unknown") }
        return nil
    }

    // MARK: Long-polling

    /// Answers a long-polling request (`GET` waits for packets, `POST` delivers them).
    public func handlePolling(method: String, query: [String: String], body: ByteBuffer?) async -> EngineHTTPResponse {
        if let problem = validate(query: query, transport: "polling") { return problem }
        guard let sid = query["sid"] else {
            guard method == "GET" else { return .error(2, "Bad handshake method") }
            let session = await openSession(transport: .polling, query: query)
            return await poll(session)
        }
        guard let session = session(sid) else { return .error(1, "Session ID unknown") }
        switch method {
        case "GET": return await poll(session)
        case "POST": return await post(session, body: body)
        default: return .error(2, "Bad handshake method")
        }
    }

    private func poll(_ session: EngineSession) async -> EngineHTTPResponse {
        if session.isPongOverdue(now: now, pingTimeout: configuration.pingTimeoutMilliseconds) {
            await close(session, reason: .pingTimeout)
            return .error(1, "Session ID unknown")
        }
        if session.isUpgrading {
            // Mid-upgrade: the WebSocket is about to take over. Wait briefly for its `5`; if
            // it comes, this poll is refused, otherwise it is released with a noop.
            for _ in 0..<10 where session.isUpgrading {
                try? await CancellableSleep.sleep(for: .milliseconds(10))
            }
            if session.transport == .websocket { return .error(3, "Bad request") }
            return EngineHTTPResponse(status: 200, contentType: "text/plain; charset=UTF-8", body: "6")
        }
        if let refusal = await refusal(session.beginPoll(), session) { return refusal }
        defer { session.endPoll() }
        await session.queue.waitUntilReadable()
        // Upgraded while this poll waited: the WebSocket owns the queue now.
        if session.transport == .websocket { return .error(3, "Bad request") }
        if session.queue.closeReason == .slowConsumer {
            await close(session, reason: .slowConsumer)
            return EngineHTTPResponse(status: 200, contentType: "text/plain; charset=UTF-8", body: EngineCodec.encodeText(.close))
        }
        let frames = session.queue.drain()
        var packets: [String] = []
        packets.reserveCapacity(frames.count)
        for frame in frames {
            switch frame {
            case .text(let text): packets.append(text)
            case .binary(let bytes): packets.append(EngineCodec.encodeText(.binary(bytes)))
            }
        }
        if packets.isEmpty {
            // Closed with nothing left to say: a client's own close is answered with a noop,
            // anything else with a close packet.
            packets.append(session.closeReason == .clientClose ? "6" : EngineCodec.encodeText(.close))
        }
        return EngineHTTPResponse(status: 200, contentType: "text/plain; charset=UTF-8", body: packets.joined(separator: "\u{1e}"))
    }

    /// The answer when a poll or post may not start: two at once on one session is a protocol
    /// error that ends the session; a closed or upgraded session is a bad request.
    private func refusal(_ start: EngineSession.PollStart, _ session: EngineSession) async -> EngineHTTPResponse? {
        switch start {
        case .ok:
            return nil
        case .concurrent:
            await close(session, reason: .transportError)
            return .error(3, "Bad request")
        case .wrongTransport, .closed:
            return .error(3, "Bad request")
        }
    }

    private func post(_ session: EngineSession, body: ByteBuffer?) async -> EngineHTTPResponse {
        if session.isPongOverdue(now: now, pingTimeout: configuration.pingTimeoutMilliseconds) {
            await close(session, reason: .pingTimeout)
            return .error(1, "Session ID unknown")
        }
        if let refusal = await refusal(session.beginPost(), session) { return refusal }
        defer { session.endPost() }
        guard let body, body.readableBytes <= configuration.maxPayload else {
            await close(session, reason: .transportError)
            return EngineHTTPResponse.error(3, "Bad request", status: 413)
        }
        let text = String(buffer: body)
        let packets: [EnginePacket]
        do {
            packets = try EngineCodec.decodePayload(text)
        } catch {
            await close(session, reason: .parseError)
            return .error(3, "Bad request")
        }
        for packet in packets {
            if !(await session.receive(packet, now: now)) {
                await close(session, reason: .parseError)
                return .error(3, "Bad request")
            }
        }
        if session.isClosed { sessions.withLock { $0[session.sid] = nil } }
        return EngineHTTPResponse(status: 200, contentType: "text/html", body: "ok")
    }

    // MARK: WebSocket

    /// Whether a WebSocket upgrade request may proceed; the error response otherwise.
    ///
    /// Only the protocol version and transport are checked here: an unknown or already
    /// upgraded `sid` is accepted and then closed with a close frame, because clients treat
    /// an HTTP error on an upgrade as a crash rather than a refusal.
    public func webSocketProblem(query: [String: String]) -> EngineHTTPResponse? {
        validate(query: query, transport: "websocket")
    }

    /// The receiver of a WebSocket that passed `webSocketProblem`: a new session, or the
    /// upgrade of a polling one (`sid` in the query). An unknown or already upgraded `sid`
    /// gets its WebSocket closed at once.
    public func acceptWebSocket(query: [String: String], transport: any WebSocketTransport) -> any WebSocketReceiver {
        if let sid = query["sid"] {
            guard let existing = session(sid),
                existing.beginUpgrade(deadline: now + EngineConfiguration.milliseconds(configuration.upgradeTimeout))
            else {
                transport.close()
                return EngineWebSocket(engine: self, transport: transport, refused: ())
            }
            return EngineWebSocket(engine: self, transport: transport, upgrading: existing)
        }
        let session = makeSession(transport: .websocket, query: query)
        let socket = EngineWebSocket(engine: self, transport: transport, opened: session)
        transport.attach(session.queue)
        return socket
    }

    /// Hands a new session to the upper layer (which sets itself as its delegate).
    func didOpen(_ session: EngineSession) async {
        await onOpen(session)
    }

    // MARK: Lifecycle

    public func close(_ session: EngineSession, reason: EngineCloseReason) async {
        sessions.withLock { $0[session.sid] = nil }
        if reason == .slowConsumer && !session.isClosed { counters.add(.slowDisconnects) }
        await session.close(reason)
    }

    /// The heartbeat: pings each session on schedule and drops those that stop answering.
    public func run() async throws {
        // A sweep is never cut short: it finishes closing the sessions it found dead.
        await PeriodicLoop.run(
            every: configuration.sweepInterval, start: .afterInterval, cancellingRound: false, logger: logger, failure: "heartbeat sweep failed"
        ) { await self.sweep() }
        // Shutting down: tell every client, so they reconnect elsewhere.
        for session in sessions.withLock({ Array($0.values) }) {
            await close(session, reason: .serverShutdown)
        }
    }

    /// One pass over the sessions: each is looked at once (its ping, pong and connect
    /// deadlines, whether it closed), and closed ones leave the table in one short lock.
    func sweep() async {
        let now = self.now
        let all = sessions.withLock { Array($0.values) }
        var closed: [String] = []
        for session in all {
            if session.queue.closeReason == .slowConsumer {
                await close(session, reason: .slowConsumer)
                continue
            }
            switch session.sweep(now: now, pingInterval: configuration.pingIntervalMilliseconds, pingTimeout: configuration.pingTimeoutMilliseconds) {
            case .none, .upgradeTimeout: break
            case .closed: closed.append(session.sid)
            case .ping: session.send(.ping(""))
            case .timeout: await close(session, reason: .pingTimeout)
            case .deadline: await close(session, reason: .forcedClose)
            }
        }
        guard !closed.isEmpty else { return }
        // A sid is never reused, so the entry is still this closed session (or already gone).
        sessions.withLock { sessions in
            for sid in closed { sessions[sid] = nil }
        }
    }
}
