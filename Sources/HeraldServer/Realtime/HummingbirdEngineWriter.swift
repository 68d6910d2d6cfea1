import HeraldRealtime
import HummingbirdWebSocket
import NIOCore

/// Writes Engine.IO and native frames to a Hummingbird WebSocket.
struct HummingbirdEngineWriter: EngineWebSocketWriter {
    let outbound: WebSocketOutboundWriter

    func write(_ frame: HeraldRealtime.OutboundFrame) async throws {
        switch frame {
        case .text(let text): try await outbound.write(.text(text))
        case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
        }
    }

    func close() async {
        try? await outbound.close(.normalClosure, reason: nil)
    }
}

extension WebSocketInboundStream {
    /// The stream's messages as `InboundFrame`s, each at most `maxSize` bytes.
    func frames(maxSize: Int) -> some AsyncSequence<InboundFrame, any Error> {
        messages(maxSize: maxSize).map { message -> InboundFrame in
            switch message {
            case .text(let text): .text(text)
            case .binary(let buffer): .binary(Array(buffer.readableBytesView))
            }
        }
    }
}
