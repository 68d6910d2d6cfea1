import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOTLS

/// The request side of one APNs HTTP/2 connection, at frame level on the event loop.
///
/// Why frames and not NIO's stream multiplexer: a push is one HEADERS and one DATA frame out
/// and usually one HEADERS frame back. A child channel, pipeline and handler per stream, plus
/// a task hop per request, were most of a send's cost (see BENCHMARKS.md, push delivery).
/// Here a request is a dictionary entry; every request submitted within one event-loop tick
/// goes out with a single flush; deadlines are checked by one sweep per connection instead of
/// a timer per request. Errors are left to the default handling: a stream-level one concerns
/// one request, which its deadline or a reset ends; a connection-level one makes
/// NIOHTTP2Handler or the TLS handler close the channel, failing everything pending through
/// `channelInactive`.
final class APNsConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    /// Connection-level window credit returned once this much response data has arrived.
    static let windowUpdateThreshold = 32 * 1024

    private let authority: String
    private let sweepInterval: TimeAmount
    private let onUnusable: @Sendable () -> Void
    private var context: ChannelHandlerContext?
    /// The requests waiting on this connection and the rules for their answers.
    private var streams: APNsStreams<EventLoopPromise<PushHTTP.Response>>
    private var flushScheduled = false
    private var unconsumedBytes = 0
    private var sweep: Scheduled<Void>?

    /// - Parameter firstStreamID: 1 for a new connection (tests start near the last id).
    init(
        authority: String, sweepInterval: TimeAmount = .milliseconds(100), firstStreamID: Int = 1, onUnusable: @escaping @Sendable () -> Void
    ) {
        self.authority = authority
        self.sweepInterval = sweepInterval
        self.onUnusable = onUnusable
        streams = APNsStreams(firstStreamID: firstStreamID)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleSweep(context.eventLoop)
    }

    private func scheduleSweep(_ loop: any EventLoop) {
        sweep = loop.assumeIsolated().scheduleTask(in: sweepInterval) { [weak self] in
            guard let self, self.context != nil else { return }
            self.expire()
            self.scheduleSweep(loop)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweep?.cancel()
        sweep = nil
        fail(streams.closed())
        self.context = nil
    }

    /// Sends one request; `promise` completes with the answer or an `APNsTransportError`.
    /// Called on the event loop.
    func submit(
        method: String = "POST", path: String, headers: HPACKHeaders, body: ByteBuffer?, deadline: NIODeadline, promise: EventLoopPromise<PushHTTP.Response>
    ) {
        guard let context, context.channel.isActive else {
            promise.fail(APNsTransportError.connectionClosed(processed: false))
            return
        }
        let opened = streams.open(promise, deadline: deadline)
        if opened.becameUnusable { onUnusable() }
        guard let streamID = opened.stream else {
            promise.fail(APNsTransportError.connectionClosed(processed: false))
            return
        }
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 4)
        block.add(name: ":method", value: method)
        block.add(name: ":scheme", value: "https")
        block.add(name: ":authority", value: authority)
        block.add(name: ":path", value: path, indexing: .nonIndexable)  // one device's token: rarely repeats
        block.add(contentsOf: headers)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: block, endStream: body == nil)))), promise: nil)
        if let body {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))), promise: nil)
        }
        scheduleFlush(context)
    }

    /// One flush for everything written in this tick: the submissions already queued on the
    /// loop run first, so a burst of sends leaves in as few TLS records and writes as possible.
    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute { [weak self] in
            guard let self, let context = self.context else { return }
            self.flushScheduled = false
            context.flush()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            perform(streams.headers(headers.headers, endStream: headers.endStream, on: frame.streamID), context: context)
        case .data(let payload):
            countConsumed(payload.data.readableBytes + (payload.paddingBytes ?? 0), context: context)
            guard case .byteBuffer(let bytes) = payload.data else { return }
            perform(streams.data(bytes, endStream: payload.endStream, on: frame.streamID), context: context)
        case .rstStream(let code):
            perform(streams.reset(code, on: frame.streamID), context: context)
        case .goAway(let lastStreamID, _, _):
            let (failed, becameUnusable) = streams.goAway(lastStreamID: lastStreamID)
            if becameUnusable { onUnusable() }
            for waiter in failed { waiter.fail(APNsTransportError.connectionClosed(processed: false)) }
            closeIfDrained(context)
        default:
            break
        }
    }

    private func perform(_ answer: APNsStreams<EventLoopPromise<PushHTTP.Response>>.Answer, context: ChannelHandlerContext) {
        switch answer {
        case .none:
            break
        case .succeed(let promise, let response):
            promise.succeed(response)
        case .fail(let promise, let error):
            promise.fail(error)
        case .failAndReset(let promise, let error, let streamID):
            promise.fail(error)
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        }
        closeIfDrained(context)
    }

    /// Without NIO's multiplexer nobody else returns connection-level flow-control credit.
    private func countConsumed(_ bytes: Int, context: ChannelHandlerContext) {
        unconsumedBytes += bytes
        guard unconsumedBytes >= Self.windowUpdateThreshold else { return }
        let increment = unconsumedBytes
        unconsumedBytes = 0
        context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        scheduleFlush(context)
    }

    private func expire() {
        guard let context, streams.pendingCount > 0 else { return }
        let expired = streams.expire(now: .now())
        for (promise, streamID) in expired {
            promise.fail(APNsTransportError.timeout)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        }
        if !expired.isEmpty { scheduleFlush(context) }
        closeIfDrained(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(streams.closed())
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated)? = event as? TLSUserEvent, negotiated != "h2" {
            // APNs speaks only HTTP/2; anything else would read our preface as garbage.
            fail(streams.closed(), with: .noHTTP2)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func fail(
        _ closed: (failed: [EventLoopPromise<PushHTTP.Response>], becameUnusable: Bool),
        with error: APNsTransportError = .connectionClosed(processed: nil)
    ) {
        if closed.becameUnusable { onUnusable() }
        for promise in closed.failed { promise.fail(error) }
    }

    private func closeIfDrained(_ context: ChannelHandlerContext) {
        if streams.shouldClose && context.channel.isActive {
            context.close(promise: nil)
        }
    }
}

/// Why a request got no answer from APNs.
public enum APNsTransportError: Error, Equatable, CustomStringConvertible {
    /// No answer before the request's deadline.
    case timeout
    /// The connection closed or was shut down. `processed: false` means APNs cannot have acted
    /// on the request (it was above a GOAWAY's last stream, or never sent), so sending it again
    /// at once is safe; nil means unknown.
    case connectionClosed(processed: Bool?)
    case streamReset(code: String, processed: Bool?)
    case responseTooLarge
    case malformedResponse
    /// The server did not agree to HTTP/2 in the TLS handshake (ALPN).
    case noHTTP2
    case connectFailed(String)

    /// Sure not to have reached APNs: the client tries another connection once.
    var neverProcessed: Bool {
        switch self {
        case .connectionClosed(processed: false), .streamReset(_, processed: false): true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .timeout: "no answer before the deadline"
        case .connectionClosed: "the connection closed"
        case .streamReset(let code, _): "the stream was reset (\(code))"
        case .responseTooLarge: "the answer was larger than \(APNsStreamLimits.maxBody) bytes"
        case .malformedResponse: "the answer had no status"
        case .noHTTP2: "the server did not negotiate HTTP/2"
        case .connectFailed(let why): "could not connect: \(why)"
        }
    }
}
