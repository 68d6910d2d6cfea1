import HTTPTypes
import HeraldCore
import HeraldRealtime
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Herald's HTTP/1.1 connections: Hummingbird serves ordinary requests; a WebSocket upgrade
/// that `decide` accepts is served by `WebSocketPipeline` (HeraldRealtime) on the connection's event
/// loop, with no task per connection.
///
/// Why not Hummingbird's WebSocket channel: it serves each WebSocket from an async handler
/// (a reader task, a writer task and one task hop and one system call per frame), which
/// cost ≈ 22 KB per idle connection and most of a broadcast's CPU.
public struct RealtimeHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    /// Looks at an upgrade request (its URI and `Authorization` header).
    public typealias Decide = @Sendable (_ uri: String, _ authorization: String?) async -> WebSocketDecision

    enum UpgradeResult: Sendable {
        case websocket
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, WebSocketRefusal)
    }

    public struct Value: ServerChildChannelValue {
        let result: EventLoopFuture<UpgradeResult>
        public let channel: any Channel
    }

    public let responder: HTTPChannelHandler.Responder
    private let decide: Decide
    private let limits: WebSocketLimits
    private let origins: CORSPolicy
    private let deadlines: HTTPConnectionDeadlines.Limits
    private let clientCap: ClientConnectionCap?

    /// `origins`: which browser pages may open a WebSocket (an upgrade with an `Origin` the
    /// policy refuses gets 403 `ORIGIN_NOT_ALLOWED`; one without `Origin` is not a browser's).
    init(
        responder: @escaping HTTPChannelHandler.Responder, limits: WebSocketLimits, origins: CORSPolicy, deadlines: HTTPConnectionDeadlines.Limits,
        clientCap: ClientConnectionCap?, decide: @escaping Decide
    ) {
        self.responder = Self.redirectingLateUpgrades(responder)
        self.decide = decide
        self.limits = limits
        self.origins = origins
        self.deadlines = deadlines
        self.clientCap = clientCap
    }

    /// The server builder for `Application(server:)`. `server`: the section's connection
    /// deadlines and per-client cap (`connectionLimit` is the node's, which the cap's
    /// default is a share of).
    public static func builder(
        limits: WebSocketLimits, origins: CORSPolicy, server: ServerConfig = ServerConfig(), connectionLimit: Int = 1 << 20, decide: @escaping Decide
    ) -> HTTPServerBuilder {
        let deadlines = HTTPConnectionDeadlines.Limits(
            idleTimeout: .milliseconds(Int64(server.idleTimeoutMs)), bodyTimeout: .milliseconds(Int64(server.requestBodyTimeoutMs)),
            minimumBodyRate: server.requestBodyMinBytesPerSecond)
        let cap = ClientConnectionCap.resolve(
            configured: server.maxConnectionsPerClient, connectionLimit: connectionLimit, behindProxy: server.trustForwardedFor
        )
        .map(ClientConnectionCap.init(limit:))
        return HTTPServerBuilder { responder in
            RealtimeHTTPChannel(responder: responder, limits: limits, origins: origins, deadlines: deadlines, clientCap: cap, decide: decide)
        }
    }

    /// Sent to a connection over its client's cap before it is closed: raw bytes, as no
    /// HTTP pipeline is set up for it.
    static let overCap: ByteBuffer = {
        let body =
            #"{"error":{"code":""# + ErrorCode.tooManyConnections.rawValue + #"","message":"Too many open connections from this address; close some first."}}"#
        return ByteBuffer(
            string: "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
    }()

    struct RefusedOverCap: Error {}

    /// Counts the connection against its client's cap; false (and the connection answered
    /// 503 and closed) when the client already holds its share.
    private func admit(_ channel: any Channel) -> Bool {
        guard let cap = clientCap, let client = ClientConnectionCap.Client(channel.remoteAddress) else { return true }
        guard cap.admit(client) else {
            channel.writeAndFlush(Self.overCap).whenComplete { _ in channel.close(promise: nil) }
            return false
        }
        channel.closeFuture.whenComplete { _ in cap.release(client) }
        return true
    }

    static let originRefusal = WebSocketRefusal.error(
        403, code: .originNotAllowed, message: "Pages on this origin may not open Herald's WebSockets (cors.allowed_origins).")

    /// NIO looks for an upgrade only in a connection's first request. An upgrade asked for
    /// later on a kept-alive connection is sent back to the same URI on a new connection
    /// (`307` and `Connection: close`), where it is the first request.
    static func redirectingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct ClosingAfterRedirect: Error {}
        return { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                try await responder(request, writer, channel)
                return
            }
            let location = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
            try await writer.writeResponse(HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw ClosingAfterRedirect()
        }
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // A refused connection still sets up (a failed setup leaves its socket to NIO,
        // which does not close it): it is closed here, and `handle` sees the refusal.
        guard admit(channel) else {
            return channel.eventLoop.makeSucceededFuture(Value(result: channel.eventLoop.makeFailedFuture(RefusedOverCap()), channel: channel))
        }
        let deadlines = self.deadlines
        return channel.eventLoop.makeCompletedFuture {
            // NIO keeps each connection's last receive buffer for the next read, sized by
            // this allocator: its default starts at 2 KB, which an idle WebSocket would hold
            // for its whole life. 512 bytes holds a typical message; it still grows as reads
            // fill it (HTTP bodies, large messages).
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536))
            let decide = self.decide
            let limits = self.limits
            let origins = self.origins
            let decision = NIOLoopBoundBox<WebSocketDecision?>(nil, eventLoop: channel.eventLoop)
            // Until the first request head is complete nothing above NIO's decoder owns the
            // connection: a peer that connects and sends nothing, or trickles a head, is cut.
            let headSeen = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let headDeadline = channel.eventLoop.scheduleTask(in: limits.requestHeadTimeout) {
                if !headSeen.value { channel.close(promise: nil) }
            }
            channel.closeFuture.whenComplete { _ in headDeadline.cancel() }
            let upgrader = WebSocketUpgrader<UpgradeResult>(
                shouldUpgrade: { channel, head in
                    headSeen.value = true
                    guard origins.allowsWebSocket(origin: head.headers.first(name: "origin"), host: head.headers.first(name: "host")) else {
                        decision.value = .refuse(Self.originRefusal)
                        return channel.eventLoop.makeSucceededFuture(nil)
                    }
                    let promise = channel.eventLoop.makePromise(of: WebSocketDecision.self)
                    promise.completeWithTask { await decide(head.uri, head.headers.first(name: "authorization")) }
                    return promise.futureResult.map { decided in
                        decision.value = decided
                        if case .accept = decided { return HTTPHeaders() }
                        return nil
                    }
                },
                upgradePipeline: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard case .accept(let acceptor)? = decision.value else { throw ChannelError.inappropriateOperationForState }
                        try WebSocketPipeline.serve(channel, acceptor: acceptor, limits: limits)
                        return UpgradeResult.websocket
                    }
                })
            let upgrades = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    headSeen.value = true
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionDeadlines(limits: deadlines))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        if case .refuse(let refusal)? = decision.value { return UpgradeResult.refused(http, refusal) }
                        return UpgradeResult.notUpgraded(http)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: upgrades)
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(result: result, channel: channel)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.result.get() {
            case .websocket:
                // Served by its channel handler from here on: nothing waits for it.
                return
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let refusal):
                await Self.answer(refusal, on: http)
            }
        } catch {
            logger.debug("connection ended before its first request", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Answers a refused upgrade and ends the connection. (NIO does not hand a refused
    /// upgrade request on to the HTTP handlers, so the router cannot answer it.)
    static func answer(_ refusal: WebSocketRefusal, on http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        let body = ByteBuffer(string: refusal.body)
        let head = HTTPResponse(
            status: HTTPResponse.Status(code: refusal.status),
            headerFields: [.connection: "close", .contentType: "application/json", .contentLength: String(body.readableBytes)])
        try? await http.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.head(head), .body(body), .end(nil)])
        }
    }
}
