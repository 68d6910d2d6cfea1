import NIOCore

/// WebSocket opcodes, and the layout of the frames a server sends (RFC 6455 §5.2: final, unmasked).
enum WebSocketWire {
    static let continuation: UInt8 = 0x0
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
