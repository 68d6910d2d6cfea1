import NIOCore
import Testing

@testable import HeraldRealtime

/// Server frames as RFC 6455 §5.2 lays them out: final, unmasked, with the 7-bit, 16-bit or
/// 64-bit length form at exactly its boundaries.
@Suite struct WebSocketWireTests {
    @Test(arguments: [0, 125, 126, 65_535, 65_536])
    func lengthsUseTheirFormAtTheBoundaries(length: Int) {
        var buffer = ByteBuffer()
        let text = String(repeating: "x", count: length)
        WebSocketWire.write(.text(text), to: &buffer)
        #expect(buffer.readInteger(as: UInt8.self) == 0x81)  // FIN + text
        let marker = buffer.readInteger(as: UInt8.self)!
        #expect(marker & 0x80 == 0)  // never masked
        switch length {
        case ..<126:
            #expect(Int(marker) == length)
        case ...65_535:
            #expect(marker == 126)
            #expect(buffer.readInteger(as: UInt16.self).map(Int.init) == length)
        default:
            #expect(marker == 127)
            #expect(buffer.readInteger(as: UInt64.self).map(Int.init) == length)
        }
        #expect(WebSocketWire.headerLength(length) + length == buffer.readerIndex + buffer.readableBytes)
        #expect(buffer.readString(length: buffer.readableBytes) == text)
    }

    @Test func binaryAndControlFramesCarryTheirOpcode() {
        var buffer = ByteBuffer()
        WebSocketWire.write(.binary([1, 2, 3]), to: &buffer)
        WebSocketWire.write(control: WebSocketWire.pong, payload: ByteBuffer(string: "hi"), to: &buffer)
        #expect(Array(buffer.readableBytesView) == [0x82, 3, 1, 2, 3, 0x8A, 2, 0x68, 0x69])
    }
}
