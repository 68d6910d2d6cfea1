import NIOCore
import NIOWebSocket

/// Reads client frames (RFC 6455 §5.2) out of the bytes a WebSocket receives.
///
/// Why Herald's own: NIO's decoder comes with a `ByteToMessageHandler`, a frame encoder and an
/// error handler in every connection's pipeline, about a tenth of an idle connection's memory,
/// and it accepts what a server must refuse (unmasked client frames, reserved bits without an
/// extension). This one is a value with no state between frames: a partial frame stays in
/// the caller's buffer until the rest arrives.
struct WebSocketFrameReader {
    init() {}

    /// One whole frame, unmasked.
    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: ByteBuffer
    }

    /// Why a connection must end, as the close code to send (RFC 6455 §7.4.1).
    enum Failure: Error, Equatable {
        /// 1002: reserved bits or opcode, an unmasked frame, a fragmented or long control frame.
        case protocolError
        /// 1009: a frame longer than the largest message accepted.
        case tooLarge

        var closeCode: UInt16 {
            switch self {
            case .protocolError: 1002
            case .tooLarge: 1009
            }
        }
    }

    /// Takes the next whole frame off the front of `buffer`; nil (and `buffer` untouched) when
    /// it does not hold one yet. A frame's header is judged as soon as it is in, so a frame
    /// with a payload over `maxPayload` fails before its payload is waited for.
    func next(from buffer: inout ByteBuffer, maxPayload: Int) throws(Failure) -> Frame? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self),
            let second = buffer.getInteger(at: start + 1, as: UInt8.self)
        else { return nil }
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        // No extension is negotiated, so no reserved bit may be set (§5.2).
        guard first & 0x70 == 0 else { throw .protocolError }
        switch opcode {
        case WebSocketWire.continuation, WebSocketWire.text, WebSocketWire.binary: break
        case WebSocketWire.close, WebSocketWire.ping, WebSocketWire.pong:
            // Control frames are never fragmented and carry at most 125 bytes (§5.5).
            guard fin, second & 0x7F <= 125 else { throw .protocolError }
        default: throw .protocolError
        }
        // Every frame from a client is masked (§5.1).
        guard second & 0x80 != 0 else { throw .protocolError }
        var headerLength = 2
        let length: Int
        switch second & 0x7F {
        case 126:
            guard let long = buffer.getInteger(at: start + 2, as: UInt16.self) else { return nil }
            length = Int(long)
            headerLength += 2
        case 127:
            guard let long = buffer.getInteger(at: start + 2, as: UInt64.self) else { return nil }
            // The most significant bit must be 0 (§5.2).
            guard long >> 63 == 0 else { throw .protocolError }
            guard long <= UInt64(maxPayload) else { throw .tooLarge }
            length = Int(long)
            headerLength += 8
        case let short:
            length = Int(short)
        }
        guard length <= maxPayload else { throw .tooLarge }
        guard buffer.readableBytes >= headerLength + 4 + length,
            let mask = buffer.getBytes(at: start + headerLength, length: 4)
        else { return nil }
        buffer.moveReaderIndex(forwardBy: headerLength + 4)
        var payload = buffer.readSlice(length: length)!
        payload.webSocketUnmask(WebSocketMaskingKey(mask)!)
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }
}
