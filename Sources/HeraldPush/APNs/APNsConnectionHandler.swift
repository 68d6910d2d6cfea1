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

    struct Pending {
        var promise: EventLoopPromise<PushHTTP.Response>
        var deadline: NIODeadline
        var status: Int?
        var headers: HTTPHeaders = [:]
        var body: ByteBuffer?
    }

    /// Largest error body kept (APNs's are well under 100 bytes).
    static let maxBody = 16 * 1024
    /// Connection-level window credit returned once this much response data has arrived.
    static let windowUpdateThreshold = 32 * 1024
    /// The last client stream id HTTP/2 allows is 2^31 − 1; a connection this close to it takes
    /// no new requests and closes when its last one is answered.
    static let lastStreamID = Int(Int32.max) - 2

    private let authority: String
    private let sweepInterval: TimeAmount
    private let onUnusable: @Sendable () -> Void
    private var context: ChannelHandlerContext?
    private var pending: [HTTP2StreamID: Pending] = [:]
    private var nextStreamID = 1
    private var flushScheduled = false
    private var unconsumedBytes = 0
    private var sweep: Scheduled<Void>?
    /// Set after GOAWAY, a close, or stream-id exhaustion: no new requests here.
    private var usable = true

    init(authority: String, sweepInterval: TimeAmount = .milliseconds(100), onUnusable: @escaping @Sendable () -> Void) {
        self.authority = authority
        self.sweepInterval = sweepInterval
        self.onUnusable = onUnusable
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
        failAll(APNsTransportError.connectionClosed(processed: nil))
        self.context = nil
    }

    /// Sends one request; `promise` completes with the answer or an `APNsTransportError`.
    /// Called on the event loop.
    func submit(
        method: String = "POST", path: String, headers: HPACKHeaders, body: ByteBuffer?, deadline: NIODeadline, promise: EventLoopPromise<PushHTTP.Response>
    ) {
        guard usable, let context, context.channel.isActive else {
            promise.fail(APNsTransportError.connectionClosed(processed: false))
            return
        }
        guard nextStreamID <= Self.lastStreamID else {
            markUnusable()
            promise.fail(APNsTransportError.connectionClosed(processed: false))
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 4)
        block.add(name: ":method", value: method)
        block.add(name: ":scheme", value: "https")
        block.add(name: ":authority", value: authority)
        block.add(name: ":path", value: path, indexing: .nonIndexable)  // one device's token: rarely repeats
        block.add(contentsOf: headers)
        pending[streamID] = Pending(promise: promise, deadline: deadline)
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
            received(headers: headers.headers, endStream: headers.endStream, on: frame.streamID)
        case .data(let payload):
            countConsumed(payload.data.readableBytes + (payload.paddingBytes ?? 0), context: context)
            received(data: payload.data, endStream: payload.endStream, on: frame.streamID, context: context)
        case .rstStream(let code):
            // REFUSED_STREAM means APNs did nothing with it (RFC 9113 §8.7): safe to send elsewhere.
            if let entry = pending.removeValue(forKey: frame.streamID) {
                entry.promise.fail(APNsTransportError.streamReset(code: "\(code)", processed: code == .refusedStream ? false : nil))
            }
            closeIfDrained(context)
        case .goAway(let lastStreamID, _, _):
            markUnusable()
            // Streams above the last one APNs processed were never acted on.
            for streamID in pending.keys where streamID > lastStreamID {
                pending.removeValue(forKey: streamID)?.promise.fail(APNsTransportError.connectionClosed(processed: false))
            }
            closeIfDrained(context)
        default:
            break
        }
    }

    private func received(headers: HPACKHeaders, endStream: Bool, on streamID: HTTP2StreamID) {
        guard var entry = pending[streamID] else { return }
        for (name, value, _) in headers {
            if name == ":status" {
                entry.status = Int(value)
            } else if !name.hasPrefix(":") {
                entry.headers.add(name: name, value: value)
            }
        }
        // A 1xx answer is informational; the final one follows.
        if let status = entry.status, status < 200, !endStream {
            entry.status = nil
        }
        if endStream {
            pending.removeValue(forKey: streamID)
            complete(entry)
            if let context { closeIfDrained(context) }
        } else {
            pending[streamID] = entry
        }
    }

    private func received(data: IOData, endStream: Bool, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard var entry = pending[streamID], case .byteBuffer(var bytes) = data else { return }
        if (entry.body?.readableBytes ?? 0) + bytes.readableBytes > Self.maxBody {
            pending.removeValue(forKey: streamID)
            entry.promise.fail(APNsTransportError.responseTooLarge)
            context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
            closeIfDrained(context)
            return
        }
        if entry.body == nil {
            entry.body = bytes
        } else {
            entry.body!.writeBuffer(&bytes)
        }
        if endStream {
            pending.removeValue(forKey: streamID)
            complete(entry)
            closeIfDrained(context)
        } else {
            pending[streamID] = entry
        }
    }

    private func complete(_ entry: Pending) {
        guard let status = entry.status else {
            entry.promise.fail(APNsTransportError.malformedResponse)
            return
        }
        let body = entry.body.map { Array($0.readableBytesView) } ?? []
        entry.promise.succeed(PushHTTP.Response(status: status, headers: entry.headers, bytes: body))
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
        guard let context, !pending.isEmpty else { return }
        let now = NIODeadline.now()
        var reset = false
        for (streamID, entry) in pending where entry.deadline <= now {
            pending.removeValue(forKey: streamID)
            entry.promise.fail(APNsTransportError.timeout)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
            reset = true
        }
        if reset { scheduleFlush(context) }
        closeIfDrained(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        markUnusable()
        failAll(APNsTransportError.connectionClosed(processed: nil))
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated)? = event as? TLSUserEvent, negotiated != "h2" {
            // APNs speaks only HTTP/2; anything else would read our preface as garbage.
            markUnusable()
            failAll(APNsTransportError.noHTTP2)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func markUnusable() {
        guard usable else { return }
        usable = false
        onUnusable()
    }

    private func closeIfDrained(_ context: ChannelHandlerContext) {
        if !usable && pending.isEmpty && context.channel.isActive {
            context.close(promise: nil)
        }
    }

    private func failAll(_ error: APNsTransportError) {
        let entries = pending
        pending.removeAll()
        for entry in entries.values { entry.promise.fail(error) }
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
        case .responseTooLarge: "the answer was larger than \(APNsConnectionHandler.maxBody) bytes"
        case .malformedResponse: "the answer had no status"
        case .noHTTP2: "the server did not negotiate HTTP/2"
        case .connectFailed(let why): "could not connect: \(why)"
        }
    }
}
