import NIOCore
import NIOHTTP1
import NIOPosix

/// What the publisher sends (immutable).
struct PublisherConfig: Sendable {
    var server: SocketAddress
    var hostHeader: String
    var path: String
    var bearer: String?
    var room: String
    var event: String
    var persist: Bool
    /// Size of the event's payload object as JSON, in bytes (`{"t":…,"s":…,"pad":"xx…"}`).
    var payloadBytes: Int
    /// Keep-alive HTTP connections used in parallel.
    var connections: Int
    /// Publishes waiting for a free connection beyond this are dropped (counted).
    var maxBacklog: Int
    /// Many small rooms: publish seq goes to `room` + (roomOffset + seq mod rooms), e.g.
    /// user:bench-7.
    var rooms: Int? = nil
    var roomOffset = 0
    /// Events per request: above 1, each request is one batch publish (`{"events":[…]}`) of
    /// this many consecutive seqs, sent every `batch / rate` seconds.
    var batch = 1
}

/// Publishes `event` at a fixed rate through an HTTP endpoint
/// (`POST {"room","event","payload":{"t":<monotonic ns>,"s":<seq>,"pad":…},"persist"}`).
/// Confined to one event loop. The timestamp is taken when the request is written, so the
/// latency the receivers measure is the server's (publish request → delivery), not the
/// generator's queueing.
final class Publisher {
    let loop: any EventLoop
    let config: PublisherConfig
    private var idle: [PublishHandler] = []
    private var all: [PublishHandler] = []
    private var backlog = CircularBuffer<Int>()
    private var nextSeq = 1
    private var ticking = false
    private var start: NIODeadline = .now()
    private var interval: TimeAmount = .seconds(1)
    private var stopAt: NIODeadline = .now()
    private var tick = 0
    private var finishedPromise: EventLoopPromise<Void>?

    var attempted = 0
    var sent = 0
    var ok = 0
    var failed = 0
    var droppedBacklog = 0
    var unsentAtEnd = 0
    var reconnects = 0
    var statusCounts: [UInt: Int] = [:]
    var okSeqs = SeqSet()
    var requestLatency = Histogram()
    var firstSend: UInt64 = 0
    var lastSend: UInt64 = 0
    var lastFailure: String?

    /// Published for the clients' loops: every seq up to it was acknowledged.
    let ackedShared: SharedCounter?
    private var closing = false

    init(loop: any EventLoop, config: PublisherConfig, ackedShared: SharedCounter? = nil) {
        self.loop = loop
        self.config = config
        self.ackedShared = ackedShared
    }

    /// Opens the keep-alive connections.
    func connect() -> EventLoopFuture<Void> {
        let futures = (0..<config.connections).map { _ in openConnection() }
        return EventLoopFuture.andAllSucceed(futures, on: loop)
    }

    /// Opens one keep-alive connection; it joins the idle pool once connected.
    private func openConnection() -> EventLoopFuture<Void> {
        let bound = NIOLoopBound(self, eventLoop: loop)
        return ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = PublishHandler(publisher: bound.value)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler)
                    bound.value.all.append(handler)
                }
            }
            .connect(to: config.server)
            .map { _ in () }
    }

    /// A connection is free: it takes the oldest waiting publish, or joins the pool.
    func becameIdle(_ handler: PublishHandler) {
        if let next = backlog.popFirst() {
            send(next, on: handler)
        } else {
            idle.append(handler)
        }
    }

    /// Publishes `rate` events per second for `duration`; the future completes when the last
    /// response has arrived (or `grace` after the end).
    func run(rate: Double, duration: TimeAmount, grace: TimeAmount = .seconds(10)) -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        let promise = loop.makePromise(of: Void.self)
        finishedPromise = promise
        start = .now()
        interval = .nanoseconds(Int64(1e9 * Double(config.batch) / rate))
        stopAt = start + duration
        ticking = true
        tick = 0
        scheduleNext()
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(deadline: stopAt + grace) { bound.value.finish() }
        return promise.futureResult
    }

    /// The highest seq with every seq up to it acknowledged (2xx).
    var ackedPrefix: Int { okSeqs.prefix }
    var lastSeq: Int { nextSeq - 1 }

    private func scheduleNext() {
        let deadline = start + .nanoseconds(interval.nanoseconds * Int64(tick))
        guard deadline < stopAt else {
            ticking = false
            // A server that could not keep up leaves a backlog: it is not sent after the end
            // (the run stays bounded), only counted.
            unsentAtEnd = backlog.count
            backlog.removeAll()
            maybeFinish()
            return
        }
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(deadline: deadline) {
            let publisher = bound.value
            publisher.tick += 1
            publisher.fire()
            publisher.scheduleNext()
        }
    }

    private func fire() {
        let seq = nextSeq
        nextSeq += config.batch
        attempted += config.batch
        if let handler = idle.popLast() {
            send(seq, on: handler)
        } else if backlog.count < config.maxBacklog {
            backlog.append(seq)
        } else {
            droppedBacklog += config.batch
        }
    }

    private func send(_ seq: Int, on handler: PublishHandler) {
        let now = monotonicNanos()
        if firstSend == 0 { firstSend = now }
        lastSend = now
        sent += config.batch
        handler.send(seq: seq, body: config.batch > 1 ? batchBody(first: seq, now: now) : body(seq: seq, now: now), at: now)
    }

    func body(seq: Int, now: UInt64) -> String {
        let head = #"{"t":"# + String(now) + #","s":"# + String(seq) + #","pad":""#
        let pad = Swift.max(0, config.payloadBytes - head.utf8.count - 2)
        let payload = head + String(repeating: "x", count: pad) + #""}"#
        let room = config.rooms.map { config.room + String(config.roomOffset + seq % $0) } ?? config.room
        var body = #"{"room":"# + JSON.quote(room) + #","event":"# + JSON.quote(config.event)
        body += #","payload":"# + payload + #","persist":"# + (config.persist ? "true" : "false") + "}"
        return body
    }

    /// `{"events":[…]}`: the events of seqs `first ..< first + batch`, each as `body` writes it.
    func batchBody(first: Int, now: UInt64) -> String {
        var body = #"{"events":["#
        for seq in first..<(first + config.batch) {
            if seq > first { body += "," }
            body += self.body(seq: seq, now: now)
        }
        return body + "]}"
    }

    func completed(_ handler: PublishHandler, seq: Int, status: UInt?, startedAt: UInt64) {
        let now = monotonicNanos()
        requestLatency.record((now &- startedAt) / 1000)
        if let status {
            statusCounts[status, default: 0] += 1
            if (200..<300).contains(status) {
                ok += config.batch
                for each in seq..<(seq + config.batch) { okSeqs.insert(each) }
                ackedShared?.store(okSeqs.prefix)
            } else {
                failed += config.batch
            }
        } else {
            failed += config.batch
        }
        if handler.isUsable { becameIdle(handler) }
        maybeFinish()
    }

    /// A connection closed (the server's keep-alive timeout, say): replace it.
    func lost(_ handler: PublishHandler, error: String) {
        idle.removeAll { $0 === handler }
        all.removeAll { $0 === handler }
        guard !closing else { return }
        reconnects += 1
        let bound = NIOLoopBound(self, eventLoop: loop)
        openConnection().whenFailure { error in bound.value.lastFailure = "reconnecting: \(error)" }
    }

    private func maybeFinish() {
        guard !ticking, backlog.isEmpty, all.allSatisfy({ !$0.busy }) else { return }
        finish()
    }

    private func finish() {
        let promise = finishedPromise
        finishedPromise = nil
        promise?.succeed(())
    }

    func close() {
        closing = true
        for handler in all { handler.context?.close(promise: nil) }
    }

    func summary() -> [(String, JSON)] {
        let seconds = Double(lastSend &- firstSend) / 1e9
        var statuses: [(String, JSON)] = statusCounts.sorted { $0.key < $1.key }.map { (String($0.key), JSON.int($0.value)) }
        if statuses.isEmpty { statuses = [] }
        var out: [(String, JSON)] = [
            ("publish_batch", .int(config.batch)),
            ("publish_attempted", .int(attempted)),
            ("publish_sent", .int(sent)),
            ("publish_ok", .int(ok)),
            ("publish_failed", .int(failed)),
            ("publish_dropped_backlog", .int(droppedBacklog)),
            ("publish_unsent_at_end", .int(unsentAtEnd)),
            ("publish_reconnects", .int(reconnects)),
            ("publish_rate_achieved", .double(seconds > 0 ? Double(sent - 1) / seconds : 0)),
            ("publish_status", .object(statuses)),
        ]
        out += requestLatency.summaryMs(prefix: "publish_request_")
        if let lastFailure { out.append(("publish_last_error", .string(lastFailure))) }
        return out
    }
}

/// One keep-alive publishing connection: one request at a time.
final class PublishHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let publisher: Publisher
    var context: ChannelHandlerContext?
    var busy = false
    var isUsable = true
    private var seq = 0
    private var startedAt: UInt64 = 0
    private var status: UInt?

    init(publisher: Publisher) {
        self.publisher = publisher
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { publisher.becameIdle(self) }
    }

    func channelActive(context: ChannelHandlerContext) {
        publisher.becameIdle(self)
        context.fireChannelActive()
    }

    func send(seq: Int, body: String, at now: UInt64) {
        guard let context else { return }
        busy = true
        self.seq = seq
        startedAt = now
        status = nil
        let buffer = context.channel.allocator.buffer(string: body)
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: publisher.config.hostHeader)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(buffer.readableBytes))
        if let bearer = publisher.config.bearer { headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: publisher.config.path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status.code
            if !head.isKeepAlive { isUsable = false }
        case .body:
            break
        case .end:
            guard busy else { return }
            busy = false
            publisher.completed(self, seq: seq, status: status, startedAt: startedAt)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isUsable = false
        publisher.lost(self, error: "publisher connection closed")
        if busy {
            busy = false
            publisher.completed(self, seq: seq, status: nil, startedAt: startedAt)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        publisher.lastFailure = String(describing: error)
        context.close(promise: nil)
    }
}
