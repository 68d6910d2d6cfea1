import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Where the sockets go (immutable, shared by every loop).
struct Endpoint: Sendable {
    var address: SocketAddress
    var hostHeader: String
    var connectTimeout: TimeAmount = .seconds(10)
}

/// One client WebSocket on the native protocol, confined to its event loop. Text frames go
/// to `onText` with their receive time; nothing is parsed here.
final class WSConnection {
    let loop: any EventLoop
    private(set) var channel: (any Channel)?
    private var opening: EventLoopPromise<Void>?
    var onText: (UnsafeRawBufferPointer, UInt64) -> Void = { _, _ in }
    var onClose: () -> Void = {}
    private(set) var open = false

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// TCP connect and HTTP upgrade to `uri`; succeeds once the socket speaks WebSocket.
    func connect(_ endpoint: Endpoint, uri: String) -> EventLoopFuture<Void> {
        loop.preconditionInEventLoop()
        let promise = loop.makePromise(of: Void.self)
        opening = promise
        let bound = NIOLoopBound(self, eventLoop: loop)
        ClientBootstrap(group: loop)
            .connectTimeout(endpoint.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try bound.value.pipeline(channel, endpoint: endpoint, uri: uri)
                }
            }
            .connect(to: endpoint.address)
            .whenComplete { result in
                let connection = bound.value
                switch result {
                case .success(let channel): connection.channel = channel
                case .failure(let error): connection.finishOpening(.failure(error))
                }
            }
        return promise.futureResult
    }

    private func pipeline(_ channel: any Channel, endpoint: Endpoint, uri: String) throws {
        let frames = NIOLoopBound(FrameHandler(connection: self), eventLoop: channel.eventLoop)
        let requester = UpgradeRequest(connection: self, host: endpoint.hostHeader, uri: uri)
        let boundRequester = NIOLoopBound(requester, eventLoop: channel.eventLoop)
        let connection = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 22, automaticErrorHandling: false) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                sync.removeHandler(boundRequester.value, promise: nil)
                try sync.addHandler(frames.value)
                connection.value.open = true
                connection.value.finishOpening(.success(()))
            }
        }
        let sync = channel.pipeline.syncOperations
        try sync.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes, withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try sync.addHandler(requester)
    }

    func finishOpening(_ result: Result<Void, any Error>) {
        guard let promise = opening else { return }
        opening = nil
        if case .failure = result { channel?.close(promise: nil) }
        promise.completeWith(result)
    }

    /// One masked text frame, flushed at once.
    func send(_ text: String) {
        guard open, let channel else { return }
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: text))
        channel.writeAndFlush(frame, promise: nil)
    }

    func close() {
        open = false
        channel?.close(promise: nil)
    }

    fileprivate func closed() {
        let wasOpen = open
        open = false
        finishOpening(.failure(BenchError("connection closed during the upgrade")))
        if wasOpen { onClose() }
    }
}

/// Sends the upgrade GET when the TCP connection is up; a plain HTTP answer is a refusal.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let connection: WSConnection
    let host: String
    let uri: String

    init(connection: WSConnection, host: String, uri: String) {
        self.connection = connection
        self.host = host
        self.uri = uri
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Length", value: "0")
        context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            connection.finishOpening(.failure(BenchError("upgrade refused: HTTP \(head.status.code)")))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !(error is NIOHTTPClientUpgradeError) {
            connection.finishOpening(.failure(error))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed()
        context.fireChannelInactive()
    }
}

/// Text frames (reassembled if fragmented) to the connection; pings answered.
private final class FrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let connection: WSConnection
    private var fragments: ByteBuffer?

    init(connection: WSConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            if frame.fin {
                deliver(frame.unmaskedData)
            } else {
                fragments = frame.unmaskedData
            }
        case .continuation:
            guard var buffer = fragments else { return }
            var more = frame.unmaskedData
            buffer.writeBuffer(&more)
            if frame.fin {
                fragments = nil
                deliver(buffer)
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

    private func deliver(_ buffer: ByteBuffer) {
        let now = nowNanos()
        buffer.withUnsafeReadableBytes { connection.onText($0, now) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
