import Foundation
import HeraldRealtime
import Testing

@Suite struct EngineCodecTests {
    // MARK: - Single packets

    static let textForms: [(EnginePacket, String)] = [
        (
            .open(#"{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#),
            #"0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#
        ),
        (.close, "1"),
        (.ping(""), "2"),
        (.ping("probe"), "2probe"),
        (.pong(""), "3"),
        (.pong("probe"), "3probe"),
        (.message("hello"), "4hello"),
        (.message(""), "4"),
        (.message("€"), "4€"),
        (.message(#"2["hey","Jude"]"#), #"42["hey","Jude"]"#),
        (.message("héllo 🎉 \u{1e}x"), "4héllo 🎉 \u{1e}x"),
        (.upgrade, "5"),
        (.noop, "6"),
        (.binary([1, 2, 3, 4]), "bAQIDBA=="),
        (.binary([]), "b"),
    ]

    @Test(arguments: textForms)
    func encodesText(packet: EnginePacket, text: String) {
        #expect(EngineCodec.encodeText(packet) == text)
    }

    @Test(arguments: textForms)
    func decodesText(packet: EnginePacket, text: String) throws {
        #expect(try EngineCodec.decode(text: Substring(text)) == packet)
    }

    @Test func decodesFromASubstringInsideALargerString() throws {
        let body = "xx4héllo€yy"
        let start = body.index(body.startIndex, offsetBy: 2)
        let end = body.index(body.endIndex, offsetBy: -2)
        #expect(try EngineCodec.decode(text: body[start..<end]) == .message("héllo€"))
    }

    @Test func ignoresDataAfterPacketTypesWithoutPayload() throws {
        // engine.io-parser keeps going with the type and ignores the data for these types.
        #expect(try EngineCodec.decode(text: "1x") == .close)
        #expect(try EngineCodec.decode(text: "5probe") == .upgrade)
        #expect(try EngineCodec.decode(text: "6abc") == .noop)
    }

    @Test func binaryFrameIsAlwaysABinaryMessage() {
        #expect(EngineCodec.decode(binaryFrame: [1, 2, 3, 4]) == .binary([1, 2, 3, 4]))
        // Even bytes that look like a text packet.
        #expect(EngineCodec.decode(binaryFrame: Array("4hello".utf8)) == .binary(Array("4hello".utf8)))
        #expect(EngineCodec.decode(binaryFrame: []) == .binary([]))
    }

    static let badText: [(String, EngineProtocolError)] = [
        ("", .emptyPacket),
        ("abc", .unknownPacketType("a")),
        ("7", .unknownPacketType("7")),
        ("9hello", .unknownPacketType("9")),
        ("-1", .unknownPacketType("-")),
        (" 4hello", .unknownPacketType(" ")),
        ("€", .unknownPacketType("€")),
        ("B", .unknownPacketType("B")),
        ("b!!!!", .invalidBase64),
        ("bA", .invalidBase64),
        ("bAQIDB", .invalidBase64),
        ("bAQ=", .invalidBase64),
        ("bAQ=I", .invalidBase64),
        ("bAQID===", .invalidBase64),
        ("b====", .invalidBase64),
        ("bAQ ID", .invalidBase64),
        ("bAQ-_", .invalidBase64),
        ("bAQIDBA==\n", .invalidBase64),
    ]

    @Test(arguments: badText)
    func rejectsBadText(text: String, error: EngineProtocolError) {
        #expect(throws: error) { try EngineCodec.decode(text: Substring(text)) }
    }

    // MARK: - Base64

    @Test func base64AcceptsUnpaddedInput() throws {
        #expect(try EngineCodec.decode(text: "bAQIDBA") == .binary([1, 2, 3, 4]))
        #expect(try EngineCodec.decode(text: "bAQ") == .binary([1]))
        #expect(try EngineCodec.decode(text: "bAQ==") == .binary([1]))
        #expect(try EngineCodec.decode(text: "bAQI") == .binary([1, 2]))
        #expect(try EngineCodec.decode(text: "bAQI=") == .binary([1, 2]))
        #expect(try EngineCodec.decode(text: "b+/8=") == .binary([0xFB, 0xFF]))
    }

    @Test func base64MatchesFoundationForEveryLengthAndByte() throws {
        var generator = SystemRandomNumberGenerator()
        var samples: [[UInt8]] = (0...40).map { length in (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
        samples.append(Array(0...255))
        samples.append(Array((0...255).reversed()))
        for bytes in samples {
            let text = EngineCodec.encodeText(.binary(bytes))
            #expect(text == "b" + Data(bytes).base64EncodedString(), "length \(bytes.count)")
            #expect(try EngineCodec.decode(text: Substring(text)) == .binary(bytes), "length \(bytes.count)")
        }
    }

    // MARK: - Polling payloads

    @Test func encodesSpecPayloads() {
        #expect(EngineCodec.encodePayload([.message("hello"), .ping(""), .message("world")]) == "4hello\u{1e}2\u{1e}4world")
        #expect(EngineCodec.encodePayload([.message("hello"), .binary([1, 2, 3, 4])]) == "4hello\u{1e}bAQIDBA==")
        #expect(EngineCodec.encodePayload([.message("hello"), .message("€"), .binary([1, 2, 3, 4])]) == "4hello\u{1e}4€\u{1e}bAQIDBA==")
        #expect(EngineCodec.encodePayload([.message(#"2["hello"]"#), .message(#"2["world"]"#)]) == "42[\"hello\"]\u{1e}42[\"world\"]")
        #expect(EngineCodec.encodePayload([.noop]) == "6")
        #expect(EngineCodec.encodePayload([.close]) == "1")
        #expect(EngineCodec.encodePayload([]) == "")
    }

    @Test func decodesSpecPayloads() throws {
        #expect(try EngineCodec.decodePayload("4hello\u{1e}2\u{1e}4world") == [.message("hello"), .ping(""), .message("world")])
        #expect(try EngineCodec.decodePayload("4hello\u{1e}4€\u{1e}bAQIDBA==") == [.message("hello"), .message("€"), .binary([1, 2, 3, 4])])
        #expect(try EngineCodec.decodePayload("4test1\u{1e}4test2\u{1e}4test3") == [.message("test1"), .message("test2"), .message("test3")])
        #expect(try EngineCodec.decodePayload("42[\"hello\"]\u{1e}42[\"world\"]") == [.message(#"2["hello"]"#), .message(#"2["world"]"#)])
        #expect(try EngineCodec.decodePayload("4hello") == [.message("hello")])
        #expect(try EngineCodec.decodePayload("3") == [.pong("")])
        #expect(try EngineCodec.decodePayload("1") == [.close])
    }

    @Test func payloadRoundTripsEveryPacketKind() throws {
        let packets: [EnginePacket] = [
            .open(#"{"sid":"abc"}"#), .close, .ping(""), .ping("probe"), .pong("probe"), .message("héllo 🎉"),
            .message(""), .binary([0, 255, 128]), .binary([]), .upgrade, .noop, .message("last"),
        ]
        let body = EngineCodec.encodePayload(packets)
        #expect(body.utf8.filter { $0 == 0x1E }.count == packets.count - 1)
        #expect(try EngineCodec.decodePayload(body) == packets)
    }

    static let badPayloads: [(String, EngineProtocolError)] = [
        ("", .emptyPacket),
        ("\u{1e}", .emptyPacket),
        ("4hello\u{1e}", .emptyPacket),
        ("\u{1e}4hello", .emptyPacket),
        ("4a\u{1e}\u{1e}4b", .emptyPacket),
        ("abc", .unknownPacketType("a")),
        ("4hello\u{1e}x", .unknownPacketType("x")),
        ("4hello\u{1e}b@@@@", .invalidBase64),
        ("4hello\u{1e}bAQIDBA==\u{1e}9", .unknownPacketType("9")),
    ]

    @Test(arguments: badPayloads)
    func rejectsBadPayloads(body: String, error: EngineProtocolError) {
        #expect(throws: error) { try EngineCodec.decodePayload(body) }
    }

    @Test func boundsTheNumberOfPacketsInAPayload() throws {
        #expect(try EngineCodec.decodePayload("4a\u{1e}4b\u{1e}4c", maxPackets: 3).count == 3)
        #expect(throws: EngineProtocolError.tooManyPackets) {
            try EngineCodec.decodePayload("4a\u{1e}4b\u{1e}4c", maxPackets: 2)
        }
        #expect(throws: EngineProtocolError.tooManyPackets) {
            try EngineCodec.decodePayload("4a", maxPackets: 0)
        }
        // The limit is checked before decoding, so a bad segment beyond it reports the limit.
        #expect(throws: EngineProtocolError.tooManyPackets) {
            try EngineCodec.decodePayload("4a\u{1e}zz", maxPackets: 1)
        }
        let many = Array(repeating: "2", count: 1001).joined(separator: "\u{1e}")
        #expect(throws: EngineProtocolError.tooManyPackets) { try EngineCodec.decodePayload(many) }
        #expect(try EngineCodec.decodePayload(String(many.dropFirst(2))).count == 1000)
    }
}
