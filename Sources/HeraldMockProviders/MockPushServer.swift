import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A provider stand-in for tests and benchmarks: TLS on 127.0.0.1 with a certificate made for the test, speaking
/// HTTP/2 (ALPN `h2`, as APNs requires) and HTTP/1.1, answering each request from a handler.
///
/// Point a sender at `baseURL` with `caFile` as its extra trusted certificate. A handler can
/// delay its answer (a stalled provider) or ask for a GOAWAY after answering.
public final class MockPushServer: Sendable {
    public struct Request: Sendable {
        public let method: String
        public let path: String
        public let headers: [(String, String)]
        public let body: Data
        /// `h2` or `http/1.1`.
        public let protocolName: String

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: Data
        /// Wait this long before answering.
        public var delay: Duration?
        /// After answering, send GOAWAY on the HTTP/2 connection.
        public var goAway: Bool
        /// Answer nothing: close the whole connection (TCP) with this request and every other
        /// one on it still in flight, as a provider whose front end dies mid-stream.
        public var dropConnection: Bool

        public init(
            status: Int, headers: [(String, String)] = [], body: Data = Data(), delay: Duration? = nil, goAway: Bool = false,
            dropConnection: Bool = false
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.goAway = goAway
            self.dropConnection = dropConnection
        }

        /// The connection is closed without an answer.
        public static let dropped = Response(status: 0, dropConnection: true)

        public static func json(_ status: Int, _ object: [String: Any], headers: [(String, String)] = []) -> Response {
            Response(
                status: status, headers: headers + [("content-type", "application/json")],
                body: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
        }
    }

    public typealias Handler = @Sendable (Request) async -> Response

    public let port: Int
    /// PEM of the server's self-signed certificate (trust it as the client's `ca_file`).
    public let caFile: String
    private let channel: any Channel
    private let received = Mutex<[Request]>([])
    private let keepsRequests: Bool
    private let box: ServerBox

    public var baseURL: String { "https://localhost:\(port)" }
    /// Every request so far (empty when started with `keepRequests: false`).
    public var requests: [Request] { received.withLock { $0 } }
    /// TCP connections accepted so far.
    public var connectionCount: Int { box.connections.load(ordering: .relaxed) }

    private init(port: Int, caFile: String, channel: any Channel, keepsRequests: Bool, box: ServerBox) {
        self.keepsRequests = keepsRequests
        self.box = box
        self.port = port
        self.caFile = caFile
        self.channel = channel
    }

    /// Starts on `port` (0: any free port). `keepRequests: false` for long runs (benchmarks).
    /// `http2Only`: speak HTTP/2 on every connection whatever ALPN said, as APNs does (clients
    /// such as aioapns negotiate no protocol); otherwise a connection without `h2` gets HTTP/1.1.
    public static func start(port: Int = 0, keepRequests: Bool = true, http2Only: Bool = false, _ handler: @escaping Handler) async throws -> MockPushServer {
        let (certificate, key) = try await TestCertificate.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let box = ServerBox()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                box.connections.add(1, ordering: .relaxed)
                let http2: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(),
                                MockRequestHandler(protocolName: "h2", box: box, handler: handler),
                            ])
                        }
                    }.map { _ in }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    if http2Only { return http2(channel) }
                    return channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: http2,
                        http1ChannelConfigurator: { channel in
                            channel.pipeline.configureHTTPServerPipeline().flatMap {
                                channel.pipeline.addHandler(MockRequestHandler(protocolName: "http/1.1", box: box, handler: handler))
                            }
                        })
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        let server = MockPushServer(port: channel.localAddress?.port ?? 0, caFile: certificate, channel: channel, keepsRequests: keepRequests, box: box)
        box.server.withLock { $0 = server }
        return server
    }

    func record(_ request: Request) {
        guard keepsRequests else { return }
        received.withLock { $0.append(request) }
    }

    public func stop() async throws {
        try await channel.close()
    }
}

/// Lets channel handlers reach the server once it exists (they are created before it).
final class ServerBox: Sendable {
    let server = Mutex<MockPushServer?>(nil)
    let connections = Atomic<Int>(0)
}

/// Collects one request, asks the handler, writes its answer.
final class MockRequestHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: NIO calls a channel handler only on its channel's event loop; the mutable
    // request state below is touched only from those calls.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let protocolName: String
    let box: ServerBox
    let handler: MockPushServer.Handler
    private var head: HTTPRequestHead?
    private var body = Data()

    init(protocolName: String, box: ServerBox, handler: @escaping MockPushServer.Handler) {
        self.protocolName = protocolName
        self.box = box
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            let request = MockPushServer.Request(
                method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body,
                protocolName: protocolName)
            box.server.withLock { $0 }?.record(request)
            let handler = self.handler
            let loop = context.eventLoop
            let bound = NIOLoopBound(context, eventLoop: loop)
            let future = loop.makeFutureWithTask { () -> MockPushServer.Response in
                let response = await handler(request)
                if let delay = response.delay {
                    // An event-loop timer, not `Task.sleep` (see HeraldCore's CancellableSleep).
                    let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                    try? await MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(nanoseconds)) {}.futureResult.get()
                }
                return response
            }
            future.whenSuccess { response in
                let context = bound.value
                if response.dropConnection {
                    (context.channel.parent ?? context.channel).close(promise: nil)
                    return
                }
                var headers = HTTPHeaders(response.headers)
                headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
                let status = HTTPResponseStatus(statusCode: response.status)
                context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                if !response.body.isEmpty {
                    context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
                }
                context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                if response.goAway, let parent = context.channel.parent {
                    // Like APNs: GOAWAY (no new streams on this connection), then close it.
                    let frame = HTTP2Frame(
                        streamID: .rootStream, payload: .goAway(lastStreamID: context.channel.streamIDForGoAway, errorCode: .noError, opaqueData: nil))
                    parent.writeAndFlush(frame).whenComplete { _ in
                        parent.eventLoop.scheduleTask(in: .milliseconds(50)) { parent.close(promise: nil) }
                    }
                }
            }
            self.head = nil
        }
    }
}

/// A self-signed certificate for `localhost` / 127.0.0.1, made with the openssl command.
public enum TestCertificate {
    public static func make() async throws -> (certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let finished = try await ChildProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ])
        guard finished.status == 0 else {
            throw ChildProcess.Failure(description: "openssl could not make a test certificate: \(finished.errorText)")
        }
        return (certificate, key)
    }
}

extension Channel {
    /// This stream's id (the last one the server processed), for a GOAWAY sent after it.
    var streamIDForGoAway: HTTP2StreamID {
        (try? self.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .maxID
    }
}
