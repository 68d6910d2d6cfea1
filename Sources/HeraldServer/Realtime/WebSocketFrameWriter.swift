import HeraldRealtime
import NIOCore

/// The outbound end of a served WebSocket, placed next to the socket so that what it writes
/// (whole frames, already encoded, several in one buffer) skips NIO's per-frame encoder. It
/// also holds reads back while the connection's receiver has a full backlog.
final class WebSocketFrameWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private(set) var context: ChannelHandlerContext?
    private var readingPaused = false
    private var readPending = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func setReadingPaused(_ paused: Bool) {
        readingPaused = paused
        if !paused, readPending, let context {
            readPending = false
            context.read()
        }
    }

    /// Writes `buffer` (encoded frames) and flushes.
    func writeAndFlush(_ buffer: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }
}

/// Server-to-client WebSocket frames (RFC 6455 §5.2: final, unmasked).
enum WebSocketWire {
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    /// Bytes of header a frame of `length` payload bytes needs.
    static func headerLength(_ length: Int) -> Int {
        length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
    }

    static func writeHeader(_ opcode: UInt8, length: Int, to buffer: inout ByteBuffer) {
        buffer.writeInteger(0x80 | opcode)
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }

    static func write(_ frame: OutboundFrame, to buffer: inout ByteBuffer) {
        switch frame {
        case .text(let text):
            writeHeader(Self.text, length: text.utf8.count, to: &buffer)
            buffer.writeString(text)
        case .binary(let bytes):
            writeHeader(Self.binary, length: bytes.count, to: &buffer)
            buffer.writeBytes(bytes)
        }
    }

    static func write(control opcode: UInt8, payload: ByteBuffer, to buffer: inout ByteBuffer) {
        writeHeader(opcode, length: payload.readableBytes, to: &buffer)
        var payload = payload
        buffer.writeBuffer(&payload)
    }
}
