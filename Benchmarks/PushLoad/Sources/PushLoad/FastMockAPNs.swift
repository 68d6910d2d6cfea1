import Foundation
import HeraldMockProviders
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A mock APNs that answers on the event loop, frame by frame.
///
/// Why it exists: `MockPushServer` (the shared test mock) converts every HTTP/2 stream to
/// HTTP/1 parts, copies the body into `Data`, maps the headers into an array of tuples and
/// hops to a Swift concurrency Task and back for each request so its handler can be `async`.
/// Those costs are the mock's, not the client's; this one keeps only what APNs semantics
/// need (`apns-id` echoed, 200, a 403 without a provider token) so the mock is not the
/// bottleneck of the client measurement. Same TLS (the shared `TestCertificate`), same
/// HTTP/2 settings (NIO defaults: 100 concurrent streams per connection).
enum FastMockAPNs {
    /// - Parameter connectionWindow: the connection-level inbound flow-control window
    ///   (HTTP/2's and NIO's default is 65,535 bytes).
    static func start(port: Int, group: any EventLoopGroup, connectionWindow: Int = 65535) async throws -> (channel: any Channel, port: Int, caFile: String) {
        let (certificate, key) = try await TestCertificate.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.targetWindowSize = connectionWindow
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(FastAPNsStreamHandler())
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return (channel, channel.localAddress?.port ?? 0, certificate)
    }
}

/// One request stream: remember what the answer needs from the headers, answer at END_STREAM.
final class FastAPNsStreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var apnsID: String?
    private var valid = false
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            let h = headers.headers
            apnsID = h.first(name: "apns-id")
            let path = h.first(name: ":path") ?? ""
            // A push to a device, or a broadcast to a channel (iOS 18).
            let target = path.hasPrefix("/3/device/") || (path.hasPrefix("/4/broadcasts/apps/") && h.first(name: "apns-channel-id") != nil)
            valid = h.first(name: ":method") == "POST" && target && (h.first(name: "authorization")?.hasPrefix("bearer ") ?? false)
            if headers.endStream { respond(context: context) }
        case .data(let data):
            if data.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let id = apnsID ?? UUID().uuidString
        if valid {
            let headers: HPACKHeaders = [":status": "200", "apns-id": id]
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        } else {
            let body = #"{"reason":"MissingProviderToken"}"#
            let headers: HPACKHeaders = [
                ":status": "403", "apns-id": id, "content-type": "application/json", "content-length": String(body.utf8.count),
            ]
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            let buffer = context.channel.allocator.buffer(string: body)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
    }
}
