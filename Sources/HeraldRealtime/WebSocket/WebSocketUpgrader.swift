import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// The server's half of the WebSocket opening handshake (RFC 6455 §4.2).
///
/// Why not NIO's `NIOTypedWebSocketServerUpgrader`: it always adds its frame encoder and
/// decoder to the pipeline, which Herald's connections do without (`WebSocketFrameReader`
/// reads frames, whole encoded frames are written as bytes). The checks are the same:
/// exactly one `Sec-WebSocket-Key`, exactly one `Sec-WebSocket-Version`, and that version 13.
public struct WebSocketUpgrader<UpgradeResult: Sendable>: NIOTypedHTTPServerProtocolUpgrader {
    /// Extra response headers to upgrade with, or nil to refuse the upgrade.
    public typealias ShouldUpgrade = @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>
    /// Builds the upgraded pipeline, once the `101` has been written.
    public typealias Upgrade = @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<UpgradeResult>

    enum Refused: Error {
        /// The key or version header is missing, repeated, or the version is not 13.
        case invalidHandshake
        /// `shouldUpgrade` said no.
        case refused
    }

    public let supportedProtocol = "websocket"
    public let requiredUpgradeHeaders: [String] = []
    let shouldUpgrade: ShouldUpgrade
    let upgradePipeline: Upgrade

    public init(shouldUpgrade: @escaping ShouldUpgrade, upgradePipeline: @escaping Upgrade) {
        self.shouldUpgrade = shouldUpgrade
        self.upgradePipeline = upgradePipeline
    }

    public func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        let keys = upgradeRequest.headers[canonicalForm: "Sec-WebSocket-Key"]
        let versions = upgradeRequest.headers[canonicalForm: "Sec-WebSocket-Version"]
        guard keys.count == 1, versions.count == 1, versions[0] == "13" else {
            return channel.eventLoop.makeFailedFuture(Refused.invalidHandshake)
        }
        let accept = Self.acceptValue(forKey: String(keys[0]))
        return shouldUpgrade(channel, upgradeRequest).flatMapThrowing { extra in
            guard var headers = extra else { throw Refused.refused }
            headers.replaceOrAdd(name: "Upgrade", value: "websocket")
            headers.add(name: "Sec-WebSocket-Accept", value: accept)
            headers.replaceOrAdd(name: "Connection", value: "upgrade")
            return headers
        }
    }

    public func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<UpgradeResult> {
        upgradePipeline(channel, upgradeRequest)
    }

    /// `Sec-WebSocket-Accept`: base64 of the SHA-1 of the key and the protocol's GUID (§4.2.2).
    static func acceptValue(forKey key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }
}
