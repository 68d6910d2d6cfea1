import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// What every simulated client of a run shares (immutable, so it crosses threads freely).
struct ClientConfig: Sendable {
    /// One token per client (`--tokens-file`): client i uses tokens[i mod count].
    var tokens: [String]
    /// The first client's number (`--client-offset`).
    var clientOffset: Int
    /// The servers to spread clients over: client i connects to servers[i % count] (a
    /// cluster's nodes, each client on one).
    var servers: [SocketAddress]
    var hostHeaders: [String]
    /// Path and query of the WebSocket upgrade, e.g. `/socket.io/?EIO=4&transport=websocket`.
    var requestURI: String
    var token: String?
    /// Source addresses to spread connections over (empty: let the kernel choose).
    var sourceAddresses: [SocketAddress]
    /// Only events with this name count as deliveries.
    var eventName: String
    var connectTimeout: TimeAmount
    /// After a recovering CONNECT, ask Herald's `whoami` for its `recovered` flag.
    var whoamiAfterRecovery: Bool
    var maxFrameSize: Int = 1 << 20
    /// Every seq up to this one was acknowledged by the publish endpoint (set by the publisher).
    var ackedPrefix = SharedCounter()
    /// Many small rooms (`--rooms`): client offset + i is the only member of room offset + i,
    /// which gets the seqs s with s mod rooms = i (in order).
    var rooms: Int? = nil
}

/// Counters of one event loop; only ever touched on that loop (no locks on the hot path).
final class LoopStats {
    var latency = Histogram()
    /// The same latencies by the server the client is on (`--url` with several servers).
    var latencyByServer: [Histogram] = []
    var deliveries = 0
    var duplicates = 0
    /// With `rooms`: events that reached a client not in their room.
    var strays = 0
    var otherEvents = 0
    var pingsAnswered = 0
    var unexpectedCloses = 0
    var connectFailures: [String: Int] = [:]
    var firstReceive: UInt64 = 0
    var lastReceive: UInt64 = 0
    /// Storm: reconnect start → caught up, in microseconds.
    var catchUp = Histogram()
    /// Storm: reconnect start → CONNECT reply (`40`), in microseconds.
    var reconnectLatency = Histogram()
    var sessions: [ClientSession] = []
    /// Churn: the next session to disconnect, and what the churn did.
    var churnCursor = 0
    var churnTally = ChurnTally()

    func noteFailure(_ reason: String) {
        connectFailures[reason, default: 0] += 1
    }

    /// A copy of the numbers to send across threads.
    func snapshot() -> LoopSnapshot {
        LoopSnapshot(
            latency: latency, latencyByServer: latencyByServer, deliveries: deliveries, duplicates: duplicates, strays: strays, otherEvents: otherEvents,
            pingsAnswered: pingsAnswered, unexpectedCloses: unexpectedCloses, connectFailures: connectFailures,
            firstReceive: firstReceive, lastReceive: lastReceive, catchUp: catchUp, reconnectLatency: reconnectLatency,
            connected: sessions.reduce(0) { $0 + ($1.phase == .connected ? 1 : 0) })
    }
}

struct LoopSnapshot: Sendable {
    var latency: Histogram
    var latencyByServer: [Histogram]
    var deliveries: Int
    var duplicates: Int
    var strays: Int
    var otherEvents: Int
    var pingsAnswered: Int
    var unexpectedCloses: Int
    var connectFailures: [String: Int]
    var firstReceive: UInt64
    var lastReceive: UInt64
    var catchUp: Histogram
    var reconnectLatency: Histogram
    var connected: Int

    static func merge(_ all: [LoopSnapshot]) -> LoopSnapshot {
        var out = LoopSnapshot(
            latency: Histogram(), latencyByServer: [], deliveries: 0, duplicates: 0, strays: 0, otherEvents: 0, pingsAnswered: 0, unexpectedCloses: 0,
            connectFailures: [:], firstReceive: 0, lastReceive: 0, catchUp: Histogram(), reconnectLatency: Histogram(),
            connected: 0)
        for s in all {
            out.latency.merge(s.latency)
            for (server, histogram) in s.latencyByServer.enumerated() {
                while out.latencyByServer.count <= server { out.latencyByServer.append(Histogram()) }
                out.latencyByServer[server].merge(histogram)
            }
            out.catchUp.merge(s.catchUp)
            out.reconnectLatency.merge(s.reconnectLatency)
            out.deliveries += s.deliveries
            out.duplicates += s.duplicates
            out.strays += s.strays
            out.otherEvents += s.otherEvents
            out.pingsAnswered += s.pingsAnswered
            out.unexpectedCloses += s.unexpectedCloses
            out.connected += s.connected
            for (k, v) in s.connectFailures { out.connectFailures[k, default: 0] += v }
            if s.firstReceive != 0 && (out.firstReceive == 0 || s.firstReceive < out.firstReceive) { out.firstReceive = s.firstReceive }
            if s.lastReceive > out.lastReceive { out.lastReceive = s.lastReceive }
        }
        return out
    }
}

/// One simulated Socket.IO client, across reconnects. Confined to its event loop.
final class ClientSession {
    enum Phase: Equatable {
        case idle
        case connecting
        case connected
        case closed
    }

    let index: Int
    let loop: any EventLoop
    let stats: LoopStats
    let config: ClientConfig
    var phase = Phase.idle
    var connectedOnce = false
    var channel: (any Channel)?
    var sid: String?
    var pid: String?
    /// The last recovery offset (string last argument of a persisted event).
    var offset: String?
    var seqs = SeqSet()
    /// With `rooms`: the last seq received and how many.
    var lastSeq = 0
    var received = 0
    var connectPromise: EventLoopPromise<Void>?
    /// Bumped on every connection attempt: callbacks from an older channel are ignored.
    var generation = 0

    // Storm bookkeeping.
    var recovering = false
    var sidBeforeDrop: String?
    /// Highest seq received and the offset held when the connection was dropped.
    var maxSeqAtDrop = 0
    var offsetAtDrop: String?
    var reconnectStart: UInt64 = 0
    /// Storm: caught up once every seq in 1...catchUpTarget has arrived, where the target is
    /// the publisher's acknowledged prefix when the CONNECT reply came (0: not tracking).
    var trackCatchUp = false
    var catchUpTarget = 0
    var caughtUp = false
    var sidKept: Bool?
    var whoamiRecovered: Bool?

    init(index: Int, loop: any EventLoop, stats: LoopStats, config: ClientConfig) {
        self.index = index
        self.loop = loop
        self.stats = stats
        self.config = config
    }

    /// Opens the WebSocket and connects to the namespace; succeeds on the `40` reply.
    /// Must be called on `loop`.
    func connect(recover: Bool) -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        let promise = loop.makePromise(of: Void.self)
        connectPromise = promise
        phase = .connecting
        recovering = recover
        generation += 1
        channel = nil
        let generation = self.generation
        let bound = NIOLoopBound(self, eventLoop: loop)
        var bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(config.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try bound.value.setUpPipeline(channel)
                }
            }
        if !config.sourceAddresses.isEmpty {
            // IP_BIND_ADDRESS_NO_PORT (24): pick the port at connect() so each source address
            // offers the whole ephemeral range per destination.
            bootstrap =
                bootstrap
                .channelOption(.socket(SocketOptionLevel(IPPROTO_IP), SocketOptionName(24)), value: 1)
                .bind(to: config.sourceAddresses[index % config.sourceAddresses.count])
        }
        // The whole handshake (TCP, upgrade, CONNECT reply) has a deadline too: a server at its
        // connection limit may leave new connections waiting in its accept queue.
        loop.scheduleTask(in: config.connectTimeout + config.connectTimeout) {
            bound.value.fail("handshake: no CONNECT reply in time", generation: generation)
        }
        bootstrap.connect(to: config.servers[index % config.servers.count]).whenComplete { result in
            let session = bound.value
            guard session.generation == generation else {
                if case .success(let channel) = result { channel.close(promise: nil) }
                return
            }
            switch result {
            case .success(let channel):
                session.channel = channel
                if session.phase != .connecting && session.phase != .connected { channel.close(promise: nil) }
            case .failure(let error):
                session.fail("connect: \(Self.shortName(error))", generation: generation)
            }
        }
        return promise.futureResult
    }

    static func shortName(_ error: any Error) -> String {
        if let io = error as? IOError { return "errno \(io.errnoCode)" }
        let text = String(describing: error)
        return String(text.prefix(80))
    }

    private func setUpPipeline(_ channel: any Channel) throws {
        let handler = SocketIOHandler(session: self, generation: generation)
        let requester = UpgradeRequester(session: self, generation: generation)
        let boundHandler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        let boundRequester = NIOLoopBound(requester, eventLoop: channel.eventLoop)
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: config.maxFrameSize, automaticErrorHandling: false) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                sync.removeHandler(boundRequester.value, promise: nil)
                try sync.addHandler(boundHandler.value)
            }
        }
        let sync = channel.pipeline.syncOperations
        try sync.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes, withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try sync.addHandler(requester)
    }

    /// The CONNECT packet: `40`, or `40{"token":…,"pid":…,"offset":…}`.
    func connectPacket() -> String {
        var fields: [String] = []
        if let token = config.tokens.isEmpty ? config.token : config.tokens[index % config.tokens.count] {
            fields.append("\"token\":\(JSON.quote(token))")
        }
        if recovering, let pid, let offset {
            fields.append("\"pid\":\(JSON.quote(pid))")
            fields.append("\"offset\":\(JSON.quote(offset))")
        }
        return fields.isEmpty ? "40" : "40{" + fields.joined(separator: ",") + "}"
    }

    func didConnect(sid: String?, pid: String?) {
        let now = monotonicNanos()
        if recovering {
            sidKept = sid != nil && sid == sidBeforeDrop
            stats.reconnectLatency.record((now &- reconnectStart) / 1000)
            if trackCatchUp { catchUpTarget = max(1, config.ackedPrefix.value) }
        }
        self.sid = sid
        if let pid { self.pid = pid }
        phase = .connected
        connectedOnce = true
        let promise = connectPromise
        connectPromise = nil
        promise?.succeed(())
        checkCaughtUp(now)
    }

    func fail(_ reason: String, generation: Int, channel failed: (any Channel)? = nil) {
        failed?.close(promise: nil)
        guard generation == self.generation, phase == .connecting else { return }
        phase = .closed
        stats.noteFailure(reason)
        let promise = connectPromise
        connectPromise = nil
        channel?.close(promise: nil)
        promise?.fail(LoadError(reason))
    }

    func channelClosed(generation: Int) {
        guard generation == self.generation else { return }
        switch phase {
        case .connecting:
            fail("closed before CONNECT reply", generation: generation)
        case .connected:
            phase = .closed
            stats.unexpectedCloses += 1
        case .idle, .closed:
            break
        }
    }

    /// Closes on purpose (the end of a run, or the storm's drop).
    func closeOnPurpose() {
        phase = .idle
        let channel = self.channel
        self.channel = nil
        channel?.close(promise: nil)
    }

    func received(seq: Int, sentAt: UInt64, offset: String?, now: UInt64) {
        if let offset { self.offset = offset }
        if let rooms = config.rooms {
            // One room per client: a bitset per client up to the highest seq would be
            // gigabytes; its seqs arrive in order, so a count and the last one tell duplicates
            // and strays.
            if seq % rooms != (index - config.clientOffset) % rooms {
                stats.strays += 1
                return
            }
            if seq <= lastSeq {
                stats.duplicates += 1
                return
            }
            lastSeq = seq
            received += 1
        } else if seq > 0 && !seqs.insert(seq) {
            stats.duplicates += 1
            return
        }
        stats.deliveries += 1
        if stats.firstReceive == 0 { stats.firstReceive = now }
        stats.lastReceive = now
        if sentAt > 0 && now >= sentAt {
            stats.latency.record((now - sentAt) / 1000)
            if config.servers.count > 1 {
                let server = index % config.servers.count
                while stats.latencyByServer.count <= server { stats.latencyByServer.append(Histogram()) }
                stats.latencyByServer[server].record((now - sentAt) / 1000)
            }
        }
        checkCaughtUp(now)
    }

    func checkCaughtUp(_ now: UInt64) {
        guard catchUpTarget > 0, !caughtUp, phase == .connected, seqs.prefix >= catchUpTarget else { return }
        caughtUp = true
        stats.catchUp.record((now &- reconnectStart) / 1000)
    }
}

/// Sends the upgrade request once the TCP connection is up; reports a refused upgrade.
final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let session: ClientSession
    let generation: Int

    init(session: ClientSession, generation: Int) {
        self.session = session
        self.generation = generation
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: session.config.hostHeaders[session.index % session.config.hostHeaders.count])
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: session.config.requestURI, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            session.fail("upgrade refused: HTTP \(head.status.code)", generation: generation, channel: context.channel)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A refused upgrade is followed by the response head; anything else ends the attempt.
        if !(error is NIOHTTPClientUpgradeError) {
            session.fail("upgrade: \(ClientSession.shortName(error))", generation: generation, channel: context.channel)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.channelClosed(generation: generation)
        context.fireChannelInactive()
    }
}

/// Engine.IO v4 / Socket.IO v5 over WebSocket text frames.
final class SocketIOHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let session: ClientSession
    let generation: Int
    private var fragments: ByteBuffer?
    private var fragmentIsText = false

    init(session: ClientSession, generation: Int) {
        self.session = session
        self.generation = generation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            if frame.fin {
                if frame.opcode == .text { handleText(context: context, frame.unmaskedData) }
            } else {
                fragments = frame.unmaskedData
                fragmentIsText = frame.opcode == .text
            }
        case .continuation:
            guard var buffer = fragments else { return }
            var data = frame.unmaskedData
            buffer.writeBuffer(&data)
            if frame.fin {
                fragments = nil
                if fragmentIsText { handleText(context: context, buffer) }
            } else {
                fragments = buffer
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.channelClosed(generation: generation)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func send(context: ChannelHandlerContext, _ text: String) {
        let buffer = context.channel.allocator.buffer(string: text)
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: buffer)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    private func handleText(context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        let now = monotonicNanos()
        buffer.withUnsafeReadableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let first = bytes.first else { return }
            switch first {
            case UInt8(ascii: "2"):  // Engine.IO ping
                send(context: context, "3")
                session.stats.pingsAnswered += 1
            case UInt8(ascii: "0"):  // Engine.IO open
                send(context: context, session.connectPacket())
            case UInt8(ascii: "1"):  // Engine.IO close
                context.close(promise: nil)
            case UInt8(ascii: "4"):
                guard bytes.count >= 2 else { return }
                handleSocketPacket(context: context, bytes, now: now)
            default:
                break
            }
        }
    }

    private func handleSocketPacket(context: ChannelHandlerContext, _ bytes: UnsafeBufferPointer<UInt8>, now: UInt64) {
        switch bytes[1] {
        case UInt8(ascii: "2"):  // EVENT
            guard Self.eventNameMatches(bytes, session.config.eventName) else {
                session.stats.otherEvents += 1
                return
            }
            let seq = Self.integer(after: #""s":"#, in: bytes) ?? 0
            let sentAt = Self.integer(after: #""t":"#, in: bytes) ?? 0
            session.received(seq: seq, sentAt: UInt64(sentAt), offset: Self.trailingString(bytes), now: now)
        case UInt8(ascii: "0"):  // CONNECT reply
            let text = String(decoding: UnsafeRawBufferPointer(bytes), as: UTF8.self)
            let sid = Self.stringValue("sid", in: text)
            let pid = Self.stringValue("pid", in: text)
            let recovering = session.recovering
            session.didConnect(sid: sid, pid: pid)
            if recovering && session.config.whoamiAfterRecovery {
                send(context: context, #"421["whoami"]"#)
            }
        case UInt8(ascii: "3"):  // ACK (whoami)
            let text = String(decoding: UnsafeRawBufferPointer(bytes), as: UTF8.self)
            if text.contains(#""recovered":true"#) {
                session.whoamiRecovered = true
            } else if text.contains(#""recovered":false"#) {
                session.whoamiRecovered = false
            }
        case UInt8(ascii: "4"):  // CONNECT_ERROR
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes.prefix(120)), as: UTF8.self)
            session.fail("CONNECT_ERROR \(text)", generation: generation, channel: context.channel)
        case UInt8(ascii: "1"):  // DISCONNECT
            context.close(promise: nil)
        default:
            break
        }
    }

    // MARK: Scanning (the generator reads only what it needs from each frame)

    /// `42["name"` at the start (namespace "/").
    static func eventNameMatches(_ bytes: UnsafeBufferPointer<UInt8>, _ name: String) -> Bool {
        var name = name
        return name.withUTF8 { n in
            let total = 4 + n.count + 1
            guard bytes.count >= total, bytes[2] == UInt8(ascii: "["), bytes[3] == UInt8(ascii: "\"") else { return false }
            for i in 0..<n.count where bytes[4 + i] != n[i] { return false }
            return bytes[4 + n.count] == UInt8(ascii: "\"")
        }
    }

    /// The non-negative integer right after the first `key` (e.g. `"t":`), if any.
    static func integer(after key: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let k = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        guard bytes.count > k.count else { return nil }
        var i = 0
        let last = bytes.count - k.count
        outer: while i < last {
            for j in 0..<k.count where bytes[i + j] != k[j] {
                i += 1
                continue outer
            }
            var p = i + k.count
            while p < bytes.count && bytes[p] == UInt8(ascii: " ") { p += 1 }
            var value = 0
            var digits = 0
            while p < bytes.count, bytes[p] >= UInt8(ascii: "0"), bytes[p] <= UInt8(ascii: "9") {
                value = value &* 10 &+ Int(bytes[p] - UInt8(ascii: "0"))
                p += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }

    /// The last argument when it is a string (`…,"12"]`): Herald's recovery offset.
    static func trailingString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let n = bytes.count
        guard n >= 4, bytes[n - 1] == UInt8(ascii: "]"), bytes[n - 2] == UInt8(ascii: "\"") else { return nil }
        var i = n - 3
        while i > 0 && bytes[i] != UInt8(ascii: "\"") {
            if bytes[i] == UInt8(ascii: "\\") { return nil }
            i -= 1
        }
        guard i > 0, bytes[i - 1] == UInt8(ascii: ",") else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[(i + 1)..<(n - 2)]), as: UTF8.self)
    }

    /// `"key":"value"` in a small JSON text (ids without escapes).
    static func stringValue(_ key: String, in text: String) -> String? {
        guard let range = text.range(of: "\"\(key)\":\"") else { return nil }
        let rest = text[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
