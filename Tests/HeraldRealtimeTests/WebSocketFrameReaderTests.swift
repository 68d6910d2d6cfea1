import NIOCore
import Testing

@testable import HeraldRealtime

/// Client frames as RFC 6455 §5 requires a server to read them: masked, every length form,
/// arriving in any split, and what must end the connection (1002, 1009).
@Suite struct WebSocketFrameReaderTests {
    static let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// A client frame: `first` is FIN/RSV/opcode, the payload masked unless `masked` is false.
    static func frame(_ first: UInt8, _ payload: [UInt8], masked: Bool = true, lengthForm: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = [first]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch lengthForm ?? (payload.count < 126 ? 7 : payload.count <= 0xFFFF ? 16 : 64) {
        case 7: bytes.append(maskBit | UInt8(payload.count))
        case 16: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    static func read(_ bytes: [UInt8], max: Int = 1_000_000) throws(WebSocketFrameReader.Failure) -> [WebSocketFrameReader.Frame] {
        var buffer = ByteBuffer(bytes: bytes)
        var frames: [WebSocketFrameReader.Frame] = []
        let reader = WebSocketFrameReader()
        while let frame = try reader.next(from: &buffer, maxPayload: max) { frames.append(frame) }
        return frames
    }

    @Test(arguments: [0, 5, 125, 126, 65_535, 65_536])
    func aMaskedFrameOfAnyLengthIsUnmasked(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let frames = try Self.read(Self.frame(0x82, payload))
        #expect(frames.count == 1)
        #expect(frames[0].fin && frames[0].opcode == 0x2)
        #expect(Array(frames[0].payload.readableBytesView) == payload)
    }

    @Test func aFrameSplitAnywhereIsReadOnceWhole() throws {
        let bytes = Self.frame(0x81, Array("hello, herald".utf8)) + Self.frame(0x89, Array("p".utf8))
        let reader = WebSocketFrameReader()
        var buffer = ByteBuffer()
        var texts: [String] = []
        for byte in bytes {
            buffer.writeInteger(byte)
            let before = buffer.readerIndex
            if let frame = try reader.next(from: &buffer, maxPayload: 100) {
                texts.append("\(frame.opcode):" + String(buffer: frame.payload))
            } else {
                #expect(buffer.readerIndex == before)  // nothing taken from a partial frame
            }
        }
        #expect(texts == ["1:hello, herald", "9:p"])
        #expect(buffer.readableBytes == 0)
    }

    @Test func severalFramesInOneReadComeOutInOrder() throws {
        let bytes = Self.frame(0x01, Array("ab".utf8)) + Self.frame(0x8A, []) + Self.frame(0x80, Array("cd".utf8))
        let frames = try Self.read(bytes)
        #expect(frames.map(\.opcode) == [0x1, 0xA, 0x0])
        #expect(frames.map(\.fin) == [false, true, true])
        #expect(frames.map { String(buffer: $0.payload) } == ["ab", "", "cd"])
    }

    @Test func aLengthFormLongerThanNeededIsAccepted() throws {
        // §5.2 asks for the minimal form, but readers take a longer one (as browsers' servers do).
        let frames = try Self.read(Self.frame(0x81, Array("hi".utf8), lengthForm: 64))
        #expect(frames.map { String(buffer: $0.payload) } == ["hi"])
    }

    @Test func anOverSizeFrameFailsOnItsHeaderAlone() {
        // Only the header of a frame one byte over the limit: refused without waiting for the payload.
        let header = Array(Self.frame(0x82, [UInt8](repeating: 0, count: 1_001)).prefix(8))
        #expect(throws: WebSocketFrameReader.Failure.tooLarge) { try Self.read(header, max: 1_000) }
        #expect(throws: WebSocketFrameReader.Failure.tooLarge) {
            try Self.read([0x82, 0x80 | 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(WebSocketFrameReader.Failure.tooLarge.closeCode == 1009)
    }

    static let refused: [(String, [UInt8])] = [
        ("unmasked", frame(0x81, Array("x".utf8), masked: false)),
        ("reserved bit 1", frame(0xC1, Array("x".utf8))),
        ("reserved bit 3", frame(0x91, Array("x".utf8))),
        ("reserved data opcode", frame(0x83, [])),
        ("reserved control opcode", frame(0x8B, [])),
        ("fragmented ping", frame(0x09, [])),
        ("ping over 125 bytes", frame(0x89, [UInt8](repeating: 1, count: 126))),
        ("64-bit length with its top bit set", [0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1]),
    ]

    @Test(arguments: refused)
    func whatAServerMustRefuseIsAProtocolError(name: String, bytes: [UInt8]) {
        #expect(throws: WebSocketFrameReader.Failure.protocolError, "\(name)") { try Self.read(bytes) }
        #expect(WebSocketFrameReader.Failure.protocolError.closeCode == 1002)
    }

    @Test func theAcceptValueIsRFC6455sExample() {
        // RFC 6455 §1.3.
        #expect(WebSocketUpgrader<Int>.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
