import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One TLS + HTTP/2 connection to APNs and the handler that frames its requests.
final class APNsConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<APNsConnectionHandler>
    /// Mirrors the handler's `usable` for callers off the event loop (the pool's choice).
    private let flag: OpenFlag

    var eventLoop: any EventLoop { channel.eventLoop }
    var isUsable: Bool { flag.value.load(ordering: .relaxed) && channel.isActive }

    private init(channel: any Channel, handler: NIOLoopBound<APNsConnectionHandler>, flag: OpenFlag) {
        self.channel = channel
        self.handler = handler
        self.flag = flag
    }

    /// Connects, handshakes TLS with ALPN `h2` and starts HTTP/2. A future, not an async
    /// function: the pool stores it so that callers arriving meanwhile wait for the same attempt.
    static func connect(
        host: String, port: Int, authority: String, tls: NIOSSLContext, eventLoop: any EventLoop, connectTimeout: TimeAmount,
        connectionWindow: Int
    ) -> EventLoopFuture<APNsConnection> {
        let flag = OpenFlag()
        let http2 = {
            var http2 = NIOHTTP2Handler.ConnectionConfiguration()
            // Our header blocks are built here, not taken from callers: validating them again
            // per request is pure cost. Answers are small and checked by the handler.
            http2.headerBlockValidation = .disabled
            http2.contentLengthValidation = .disabled
            http2.targetWindowSize = connectionWindow
            return http2
        }()
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)))
                    try sync.addHandler(NIOHTTP2Handler(mode: .client, connectionConfiguration: http2, streamConfiguration: .init()))
                    try sync.addHandler(APNsConnectionHandler(authority: authority) { flag.close() })
                }
            }
            .connect(host: host, port: port)
            .flatMapErrorThrowing { throw APNsTransportError.connectFailed("\($0)") }
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self)
                return APNsConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), flag: flag)
            }
    }

    /// SNI takes host names only, never an IP literal.
    static func sniName(_ host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
    }

    /// Sends one request and waits for the answer (or the deadline).
    func request(method: String = "POST", path: String, headers: HPACKHeaders, body: ByteBuffer?, deadline: NIODeadline) async throws
        -> PushHTTP.Response
    {
        let promise = eventLoop.makePromise(of: PushHTTP.Response.self)
        let handler = self.handler
        if eventLoop.inEventLoop {
            handler.value.submit(method: method, path: path, headers: headers, body: body, deadline: deadline, promise: promise)
        } else {
            eventLoop.execute { handler.value.submit(method: method, path: path, headers: headers, body: body, deadline: deadline, promise: promise) }
        }
        return try await promise.futureResult.get()
    }

    func close() async {
        try? await channel.close()
    }
}

/// Why a box: the handler is created inside the channel initializer (a `@Sendable` closure)
/// and must flip the flag the connection object reads later; `Atomic` itself cannot be
/// captured, only a reference holding it.
final class OpenFlag: Sendable {
    let value = Atomic<Bool>(true)
    func close() { value.store(false, ordering: .relaxed) }
}
