import Foundation
import HeraldCore
import HeraldRealtime
import Testing

private func placeholder(_ num: Int) -> SocketValue {
    .object(["_placeholder": .bool(true), "num": .number(Double(num))])
}

/// Decodes a text frame with a fresh decoder.
private func decodeComplete(_ text: String) throws -> SocketPacket? {
    var decoder = SocketPacketDecoder()
    return try decoder.decode(text: text)
}

@Suite struct SocketPacketTests {
    /// A wire text and its packet, named by the text in the test report.
    struct PacketCase: Sendable, CustomTestStringConvertible {
        let text: String
        let packet: SocketPacket
        var testDescription: String { text }
    }

    // MARK: - Spec examples, both directions

    /// Plain (non-binary) packets: encoding gives exactly `text`, decoding `text` gives exactly `packet`.
    static let plainCases: [PacketCase] = [
        PacketCase(text: "0", packet: SocketPacket(type: .connect)),
        PacketCase(text: #"0/admin,{"token":"123"}"#, packet: SocketPacket(type: .connect, namespace: "/admin", data: .object(["token": .string("123")]))),
        PacketCase(
            text: #"0/admin,{"sid":"oSO0OpakMV_3jnilAAAA"}"#,
            packet: SocketPacket(type: .connect, namespace: "/admin", data: .object(["sid": .string("oSO0OpakMV_3jnilAAAA")]))),
        PacketCase(text: #"0{"sid":"wZX3oN0bSVIhsaknAAAI"}"#, packet: SocketPacket(type: .connect, data: .object(["sid": .string("wZX3oN0bSVIhsaknAAAI")]))),
        PacketCase(text: "1", packet: SocketPacket(type: .disconnect)),
        PacketCase(text: "1/admin,", packet: SocketPacket(type: .disconnect, namespace: "/admin")),
        PacketCase(text: #"2["foo"]"#, packet: SocketPacket(type: .event, data: .array([.string("foo")]))),
        PacketCase(text: #"2["hello",1]"#, packet: SocketPacket(type: .event, data: .array([.string("hello"), .number(1)]))),
        PacketCase(text: #"2["hey","Jude"]"#, packet: SocketPacket(type: .event, data: .array([.string("hey"), .string("Jude")]))),
        PacketCase(text: #"2/admin,["bar"]"#, packet: SocketPacket(type: .event, namespace: "/admin", data: .array([.string("bar")]))),
        PacketCase(text: #"212["foo"]"#, packet: SocketPacket(type: .event, id: 12, data: .array([.string("foo")]))),
        PacketCase(
            text: #"2/admin,456["project:delete",123]"#,
            packet: SocketPacket(type: .event, namespace: "/admin", id: 456, data: .array([.string("project:delete"), .number(123)]))),
        PacketCase(
            text: #"2["message",1,"2",{"3":[true]}]"#,
            packet: SocketPacket(type: .event, data: .array([.string("message"), .number(1), .string("2"), .object(["3": .array([.bool(true)])])]))),
        PacketCase(
            text: #"2456["message-with-ack",1,"2",{"3":[false]}]"#,
            packet: SocketPacket(
                type: .event, id: 456, data: .array([.string("message-with-ack"), .number(1), .string("2"), .object(["3": .array([.bool(false)])])]))),
        PacketCase(text: #"3/admin,456[]"#, packet: SocketPacket(type: .ack, namespace: "/admin", id: 456, data: .array([]))),
        PacketCase(text: #"3/admin,13["bar"]"#, packet: SocketPacket(type: .ack, namespace: "/admin", id: 13, data: .array([.string("bar")]))),
        PacketCase(
            text: #"3456[1,"2",{"3":[false]}]"#,
            packet: SocketPacket(type: .ack, id: 456, data: .array([.number(1), .string("2"), .object(["3": .array([.bool(false)])])]))),
        PacketCase(text: #"30[null]"#, packet: SocketPacket(type: .ack, id: 0, data: .array([.null]))),
        PacketCase(text: #"4{"message":"Not authorized"}"#, packet: SocketPacket(type: .connectError, data: .object(["message": .string("Not authorized")]))),
        PacketCase(
            text: #"4/random,{"message":"Invalid namespace"}"#,
            packet: SocketPacket(type: .connectError, namespace: "/random", data: .object(["message": .string("Invalid namespace")]))),
        PacketCase(text: #"4"Not authorized""#, packet: SocketPacket(type: .connectError, data: .string("Not authorized"))),
        PacketCase(
            text: #"2["a",{"b":{"c":[1,-2.5,null,false,"d"]}}]"#,
            packet: SocketPacket(
                type: .event,
                data: .array([.string("a"), .object(["b": .object(["c": .array([.number(1), .number(-2.5), .null, .bool(false), .string("d")])])])]))),
    ]

    @Test(arguments: plainCases)
    func encodesPlainPacket(_ example: PacketCase) {
        let encoded = SocketPacketEncoder.encode(example.packet)
        #expect(encoded.text == example.text)
        #expect(encoded.attachments.isEmpty)
    }

    @Test(arguments: plainCases)
    func decodesPlainPacket(_ example: PacketCase) throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: example.text) == example.packet)
        #expect(!decoder.isAwaitingAttachments)
    }

    // MARK: - Decoding leniencies shared with socket.io-parser

    @Test func acceptsNamespaceWithoutTrailingComma() throws {
        #expect(try decodeComplete("1/admin") == SocketPacket(type: .disconnect, namespace: "/admin"))
        #expect(try decodeComplete("0/admin") == SocketPacket(type: .connect, namespace: "/admin"))
        #expect(try decodeComplete("0/") == SocketPacket(type: .connect))
    }

    @Test func acceptsWhitespaceAroundJSONAsJSONParseDoes() throws {
        #expect(try decodeComplete("2[\"a\", 1 ] ") == SocketPacket(type: .event, data: .array([.string("a"), .number(1)])))
        #expect(try decodeComplete("0 {\n\t\"a\" : true\r\n}") == SocketPacket(type: .connect, data: .object(["a": .bool(true)])))
    }

    @Test func acceptsTheLargestAckID() throws {
        #expect(try decodeComplete(#"3999999999999999[]"#)?.id == 999_999_999_999_999)
        #expect(try decodeComplete(#"3007[]"#)?.id == 7)
    }

    @Test func encodesEmptyNamespaceAsMain() {
        #expect(SocketPacketEncoder.encode(SocketPacket(type: .connect, namespace: "")).text == "0")
    }

    // MARK: - Binary packets

    @Test func encodesSpecBinaryEvent() {
        let packet = SocketPacket(type: .event, data: .array([.string("hello"), .binary([1, 2, 3, 4])]))
        let encoded = SocketPacketEncoder.encode(packet)
        #expect(encoded.text == #"51-["hello",{"_placeholder":true,"num":0}]"#)
        #expect(encoded.attachments == [[1, 2, 3, 4]])
    }

    @Test func encodesSpecBinaryEventWithTwoAttachmentsInANamespace() {
        let packet = SocketPacket(type: .event, namespace: "/admin", data: .array([.string("baz"), .binary([1, 2]), .binary([3, 4])]))
        let encoded = SocketPacketEncoder.encode(packet)
        #expect(encoded.text == #"52-/admin,["baz",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        #expect(encoded.attachments == [[1, 2], [3, 4]])
    }

    @Test func encodesSpecBinaryAcks() {
        let withID = SocketPacketEncoder.encode(SocketPacket(type: .ack, id: 15, data: .array([.string("bar"), .binary([1, 2, 3, 4])])))
        #expect(withID.text == #"61-15["bar",{"_placeholder":true,"num":0}]"#)
        #expect(withID.attachments == [[1, 2, 3, 4]])
        let inNamespace = SocketPacketEncoder.encode(SocketPacket(type: .ack, namespace: "/admin", id: 456, data: .array([.binary([9])])))
        #expect(inNamespace.text == #"61-/admin,456[{"_placeholder":true,"num":0}]"#)
        #expect(inNamespace.attachments == [[9]])
        let testSuiteEcho = SocketPacketEncoder.encode(SocketPacket(type: .ack, id: 789, data: .array([.binary([1, 2, 3]), .binary([4, 5, 6])])))
        #expect(testSuiteEcho.text == #"62-789[{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        #expect(testSuiteEcho.attachments == [[1, 2, 3], [4, 5, 6]])
    }

    @Test func explicitBinaryTypeWithoutBinaryAnnouncesZeroAttachments() {
        let encoded = SocketPacketEncoder.encode(SocketPacket(type: .binaryEvent, data: .array([.string("a")])))
        #expect(encoded.text == #"50-["a"]"#)
        #expect(encoded.attachments.isEmpty)
    }

    @Test func binaryOutsideEventsAndAcksIsWrittenLikeANodeBuffer() {
        let encoded = SocketPacketEncoder.encode(SocketPacket(type: .connectError, data: .object(["data": .binary([1, 2])])))
        #expect(encoded.text == #"4{"data":{"type":"Buffer","data":[1,2]}}"#)
        #expect(encoded.attachments.isEmpty)
    }

    @Test func decodesSpecBinaryEvent() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"51-["hello",{"_placeholder":true,"num":0}]"#) == nil)
        #expect(decoder.isAwaitingAttachments)
        let packet = try decoder.add(attachment: [1, 2, 3, 4])
        #expect(packet == SocketPacket(type: .binaryEvent, data: .array([.string("hello"), .binary([1, 2, 3, 4])])))
        #expect(!decoder.isAwaitingAttachments)
    }

    @Test func decodesSpecBinaryAck() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"61-/admin,456[{"_placeholder":true,"num":0}]"#) == nil)
        let packet = try decoder.add(attachment: [7, 8])
        #expect(packet == SocketPacket(type: .binaryAck, namespace: "/admin", id: 456, data: .array([.binary([7, 8])])))
    }

    @Test func decodesTwoAttachmentsInAnnouncedOrderAndThenPlainPacketsAgain() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"52-789["message",{"_placeholder":true,"num":1},{"_placeholder":true,"num":0}]"#) == nil)
        #expect(try decoder.add(attachment: [1, 2, 3]) == nil)
        #expect(decoder.isAwaitingAttachments)
        let packet = try decoder.add(attachment: [4, 5, 6])
        #expect(packet == SocketPacket(type: .binaryEvent, id: 789, data: .array([.string("message"), .binary([4, 5, 6]), .binary([1, 2, 3])])))
        // The decoder is reusable afterwards.
        #expect(try decoder.decode(text: #"2["next"]"#) == SocketPacket(type: .event, data: .array([.string("next")])))
        #expect(throws: SocketProtocolError.unexpectedBinary) { try decoder.add(attachment: [1]) }
    }

    @Test func zeroAttachmentBinaryPacketCompletesImmediately() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"50-["a"]"#) == SocketPacket(type: .binaryEvent, data: .array([.string("a")])))
        #expect(!decoder.isAwaitingAttachments)
    }

    @Test func binaryPacketNeedNotReferenceEveryAttachment() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"52-["a",{"_placeholder":true,"num":1}]"#) == nil)
        #expect(try decoder.add(attachment: [1]) == nil)
        #expect(try decoder.add(attachment: [2]) == SocketPacket(type: .binaryEvent, data: .array([.string("a"), .binary([2])])))
    }

    @Test func placeholderInAPlainEventStaysAnObject() throws {
        let packet = try decodeComplete(#"2["a",{"_placeholder":true,"num":0}]"#)
        #expect(packet == SocketPacket(type: .event, data: .array([.string("a"), placeholder(0)])))
    }

    @Test func objectWithFalsePlaceholderFlagIsNotAPlaceholder() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"51-["a",{"_placeholder":false,"num":7},{"_placeholder":true,"num":0}]"#) == nil)
        let packet = try decoder.add(attachment: [5])
        let plain: SocketValue = .object(["_placeholder": .bool(false), "num": .number(7)])
        #expect(packet?.data == .array([.string("a"), plain, .binary([5])]))
    }

    @Test func binaryAttachmentMayBeEmpty() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"51-["a",{"_placeholder":true,"num":0}]"#) == nil)
        #expect(try decoder.add(attachment: [])?.data == .array([.string("a"), .binary([])]))
    }

    @Test func nestedBinaryRoundTrips() throws {
        let data: SocketValue = .array([
            .string("upload"),
            .object([
                "a": .binary([1]),
                "b": .array([.binary([2, 2]), .object(["c": .binary([3, 3, 3])]), .number(4)]),
                "name": .string("file.bin"),
            ]),
            .binary([5]),
        ])
        let encoded = SocketPacketEncoder.encode(SocketPacket(type: .event, namespace: "/files", id: 9, data: data))
        // Object keys are sorted, so placeholders are numbered a, b[0], b[1].c, then the top-level binary.
        #expect(
            encoded.text
                == #"54-/files,9["upload",{"a":{"_placeholder":true,"num":0},"b":[{"_placeholder":true,"num":1},{"c":{"_placeholder":true,"num":2}},4],"name":"file.bin"},{"_placeholder":true,"num":3}]"#
        )
        #expect(encoded.attachments == [[1], [2, 2], [3, 3, 3], [5]])

        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: encoded.text) == nil)
        var result: SocketPacket?
        for attachment in encoded.attachments {
            #expect(result == nil)
            result = try decoder.add(attachment: attachment)
        }
        #expect(result == SocketPacket(type: .binaryEvent, namespace: "/files", id: 9, data: data))
    }

    @Test func textFrameWhileAwaitingAttachmentsIsMalformedAndDropsThePendingPacket() throws {
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: #"52-["a",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#) == nil)
        #expect(try decoder.add(attachment: [1]) == nil)
        let error = #expect(throws: SocketProtocolError.self) { try decoder.decode(text: #"2["b"]"#) }
        guard case .malformed? = error else {
            Issue.record("expected .malformed, got \(String(describing: error))")
            return
        }
        #expect(!decoder.isAwaitingAttachments)
        #expect(throws: SocketProtocolError.unexpectedBinary) { try decoder.add(attachment: [2]) }
    }

    @Test func attachmentWithoutABinaryPacketIsUnexpected() {
        var decoder = SocketPacketDecoder()
        #expect(throws: SocketProtocolError.unexpectedBinary) { try decoder.add(attachment: [1, 2, 3]) }
    }

    @Test func attachmentCountIsBounded() throws {
        var decoder = SocketPacketDecoder(maxAttachments: 2)
        #expect(try decoder.decode(text: #"52-["a"]"#) == nil)
        decoder = SocketPacketDecoder(maxAttachments: 2)
        #expect(throws: SocketProtocolError.tooManyAttachments) { try decoder.decode(text: #"53-["a"]"#) }
        var byDefault = SocketPacketDecoder()
        #expect(try byDefault.decode(text: #"510-["a"]"#) == nil)
        byDefault = SocketPacketDecoder()
        #expect(throws: SocketProtocolError.tooManyAttachments) { try byDefault.decode(text: #"511-["a"]"#) }
        #expect(throws: SocketProtocolError.tooManyAttachments) { try byDefault.decode(text: #"699999999999999999999999999-[]"#) }
    }

    // MARK: - Round trips

    static let roundTripPackets: [SocketPacket] = [
        SocketPacket(type: .connect),
        SocketPacket(type: .connect, namespace: "/admin", data: .object(["token": .string("t"), "n": .number(1.5)])),
        SocketPacket(type: .disconnect, namespace: "/a/b"),
        SocketPacket(type: .event, namespace: "/chat", id: 0, data: .array([.string("say"), .string("héllo 🎉 \"quoted\" \\ \u{0} \n\t\u{1f} / \u{2028}")])),
        SocketPacket(
            type: .event,
            data: .array([
                .string("n"), .number(-0.5), .number(1e21), .number(9_007_199_254_740_992), .number(0.1), .number(-1e-7), .number(1.7976931348623157e308),
            ])),
        SocketPacket(type: .event, data: .array([.string("empty"), .array([]), .object([:]), .string("")])),
        SocketPacket(type: .ack, id: 123_456_789_012_345, data: .array([])),
        SocketPacket(type: .ack, namespace: "/x", id: 1, data: .array([.object(["ok": .bool(true), "nested": .array([.null, .array([.number(3)])])])])),
        SocketPacket(type: .connectError, namespace: "/admin", data: .string("nope")),
        SocketPacket(type: .connectError, data: .object(["message": .string("m"), "data": .object(["code": .number(401)])])),
        SocketPacket(type: .event, data: .array([.string("emoji-key"), .object(["🔑": .string("värde"), "\"k\"": .number(-7)])])),
    ]

    @Test(arguments: roundTripPackets)
    func plainPacketRoundTrips(_ packet: SocketPacket) throws {
        let encoded = SocketPacketEncoder.encode(packet)
        #expect(encoded.attachments.isEmpty)
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: encoded.text) == packet)
    }

    @Test func binaryRoundTripWithEveryByteValue() throws {
        let bytes = Array(UInt8.min...UInt8.max)
        let packet = SocketPacket(type: .ack, id: 3, data: .array([.binary(bytes), .string("x")]))
        let encoded = SocketPacketEncoder.encode(packet)
        #expect(encoded.text == #"61-3[{"_placeholder":true,"num":0},"x"]"#)
        var decoder = SocketPacketDecoder()
        #expect(try decoder.decode(text: encoded.text) == nil)
        #expect(try decoder.add(attachment: encoded.attachments[0]) == SocketPacket(type: .binaryAck, id: 3, data: packet.data))
    }

    // MARK: - JSON text

    @Test func jsonStringEscapesLikeJSONStringify() {
        #expect(SocketPacketEncoder.jsonString("") == #""""#)
        #expect(SocketPacketEncoder.jsonString("plain") == #""plain""#)
        #expect(SocketPacketEncoder.jsonString(#"say "hi""#) == #""say \"hi\"""#)
        #expect(SocketPacketEncoder.jsonString(#"back\slash"#) == #""back\\slash""#)
        #expect(SocketPacketEncoder.jsonString("a/b") == #""a/b""#)
        #expect(SocketPacketEncoder.jsonString("\u{0}") == #""\u0000""#)
        #expect(SocketPacketEncoder.jsonString("\u{1}\u{1f}\u{7f}") == "\"\\u0001\\u001f\u{7f}\"")
        #expect(SocketPacketEncoder.jsonString("\u{8}\u{c}\n\r\t") == #""\b\f\n\r\t""#)
        #expect(SocketPacketEncoder.jsonString("\u{b}") == #""\u000b""#)
        #expect(SocketPacketEncoder.jsonString("€ 🎉 日本") == "\"€ 🎉 日本\"")
        #expect(SocketPacketEncoder.jsonString("\u{2028}\u{2029}") == "\"\u{2028}\u{2029}\"")
        #expect(SocketPacketEncoder.jsonString("e\u{301}") == "\"e\u{301}\"")
        #expect(SocketPacketEncoder.jsonString("x\"\\\ny") == #""x\"\\\ny""#)
    }

    @Test func jsonStringOutputParsesBackToTheSameString() throws {
        var all = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) })
        all += "€🎉\u{10FFFF}"
        let json = SocketPacketEncoder.jsonString(all)
        let parsed = try JSONDecoder().decode(String.self, from: Data(json.utf8))
        #expect(parsed == all)
        // And through our own decoder.
        #expect(try decodeComplete("3[\(json)]")?.data == .array([.string(all)]))
    }

    @Test func decodesJSONEscapes() throws {
        let packet = try decodeComplete(#"2["e","\u0000\"\\\/\n\u00e9\ud83d\ude00\b\f\r\t\u20AC"]"#)
        #expect(packet?.data == .array([.string("e"), .string("\u{0}\"\\/\n\u{e9}😀\u{8}\u{c}\r\t€")]))
    }

    static let numbers: [(Double, String)] = [
        (1, "1"),
        (0, "0"),
        (-0.0, "0"),
        (-1, "-1"),
        (-0.5, "-0.5"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (123_456.789, "123456.789"),
        (1e21, "1e+21"),
        (9_007_199_254_740_992, "9007199254740992"),
        (-9_007_199_254_740_992, "-9007199254740992"),
        (1e18, "1000000000000000000"),
        (-9.223_372_036_854_775_808e18, "-9223372036854775808"),
        (9.223_372_036_854_775_808e18, "9.223372036854776e+18"),
        (1e-7, "1e-07"),
        (Double.leastNonzeroMagnitude, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (.nan, "null"),
        (.infinity, "null"),
        (-.infinity, "null"),
    ]

    @Test(arguments: numbers)
    func formatsNumbers(value: Double, text: String) {
        #expect(SocketPacketEncoder.json(.number(value)) == text)
        #expect(SocketPacketEncoder.encode(SocketPacket(type: .ack, data: .array([.number(value)]))).text == "3[\(text)]")
    }

    @Test func finiteNumbersRoundTripExactly() throws {
        let values: [Double] = [1, -0.5, 1e21, 9_007_199_254_740_992, 0.1, 1.0 / 3.0, -123e-20, .leastNonzeroMagnitude, .pi, 4_294_967_296.5, -1e300]
        let text = SocketPacketEncoder.encode(SocketPacket(type: .ack, data: .array(values.map(SocketValue.number)))).text
        #expect(try decodeComplete(text)?.data == .array(values.map(SocketValue.number)))
    }

    @Test func jsonOfJSONValueIsCompactWithSortedKeys() {
        let value: JSONValue = ["b": 1, "a": [true, false, .null], "c": ["z": "y", "x": 2.5], "": "empty"]
        #expect(SocketPacketEncoder.json(value) == #"{"":"empty","a":[true,false,null],"b":1,"c":{"x":2.5,"z":"y"}}"#)
        #expect(SocketPacketEncoder.json(.array([])) == "[]")
        #expect(SocketPacketEncoder.json(.object([:])) == "{}")
        #expect(SocketPacketEncoder.json(.null) == "null")
        #expect(SocketPacketEncoder.json(.string("q\"")) == #""q\"""#)
    }

    // MARK: - Broadcast fast path

    @Test func eventTextMatchesTheFullEncoder() throws {
        let payload: JSONValue = ["a": 1, "text": "hé \"x\""]
        let fast = SocketPacketEncoder.eventText(namespace: "/chat", event: "name", argumentsJSON: SocketPacketEncoder.json(payload))
        #expect(fast == #"2/chat,["name",{"a":1,"text":"hé \"x\""}]"#)
        let full = SocketPacketEncoder.encode(SocketPacket(type: .event, namespace: "/chat", data: .array([.string("name"), SocketValue(payload)])))
        #expect(fast == full.text)
    }

    @Test func eventTextVariants() {
        #expect(SocketPacketEncoder.eventText(namespace: "/", event: "tick", argumentsJSON: "") == #"2["tick"]"#)
        #expect(SocketPacketEncoder.eventText(namespace: "/", event: "x", argumentsJSON: #""x",2"#) == #"2["x","x",2]"#)
        #expect(
            SocketPacketEncoder.eventText(namespace: "/admin", event: "project:delete", argumentsJSON: "123", ackID: 456)
                == #"2/admin,456["project:delete",123]"#)
        #expect(SocketPacketEncoder.eventText(namespace: "/", event: "q\"\n", argumentsJSON: "null", ackID: 0) == #"20["q\"\n",null]"#)
    }

    @Test func eventTextDecodesBack() throws {
        let text = SocketPacketEncoder.eventText(namespace: "/room", event: "msg", argumentsJSON: #"{"id":"1"},[2,3]"#, ackID: 77)
        #expect(
            try decodeComplete(text)
                == SocketPacket(
                    type: .event, namespace: "/room", id: 77, data: .array([.string("msg"), .object(["id": .string("1")]), .array([.number(2), .number(3)])])))
    }

    // MARK: - Malformed input

    /// Every one of these must throw `.malformed` (the server then closes the connection).
    static let malformed: [String] = [
        "",
        "7",
        "8[]",
        "9",
        "a",
        "-",
        " 2[\"a\"]",
        "abc",
        // CONNECT_ERROR with a non-JSON payload (the Socket.IO part of the test suite's "4abc").
        "4abc",
        "4",
        "41",
        "4[]",
        "4null",
        "4123",
        "4true",
        "4/admin,",
        // CONNECT
        "0[]",
        "0\"token\"",
        "0null",
        "0true",
        "0/admin,[]",
        "0{",
        "0{}x",
        "0{'a':1}",
        // DISCONNECT
        "1{}",
        "1[]",
        "1\"bye\"",
        "1/admin,{}",
        "1null",
        // EVENT
        "2",
        "2{}",  // the test suite's "42{}" without the Engine.IO "4"
        "2[]",
        "2[1]",
        "2[1.5,\"a\"]",
        "2[null]",
        "2[[\"a\"]]",
        "2[{\"a\":1}]",
        "2[true]",
        "2\"a\"",
        "2null",
        "2[\"connect\"]",
        "2[\"connect_error\"]",
        "2[\"disconnect\"]",
        "2[\"disconnecting\"]",
        "2[\"newListener\"]",
        "2[\"removeListener\"]",
        "2/admin,[\"disconnect\",1]",
        "2abc[\"message-with-ack\",1,\"2\",{\"3\":[false]}]",
        "2/admin,abc[\"a\"]",
        "2-1[\"a\"]",
        "21.5[\"a\"]",
        "2-[\"a\"]",
        "2/admin,",
        "2/admin",
        "2/admin,12",
        "21234567890123456[\"a\"]",
        "2999999999999999999999[\"a\"]",
        // Invalid JSON
        "2[\"a\"",
        "2[\"a\"]x",
        "2[\"a\"][\"b\"]",
        "2[\"a\",]",
        "2[\"a\",01]",
        "2[\"a\",NaN]",
        "2[\"a\",Infinity]",
        "2[\"a\",undefined]",
        "2['a']",
        "2[\"a\",\"\u{1}\"]",
        "2[\"a\",\"line\nbreak\"]",
        #"2["a","\x41"]"#,
        "2[\"a\"] // comment",
        #"2["a",1e400]"#,
        #"2["a",-1e400]"#,
        #"2["a",-]"#,
        #"2["a",1.]"#,
        #"2["a",.5]"#,
        #"2["a",1e]"#,
        #"2["a",1e+]"#,
        #"2["a",+1]"#,
        #"2["a",0x10]"#,
        #"2["a","\u12"]"#,
        #"2["a","\uZZZZ"]"#,
        #"2["a","\"]"#,
        #"2["a",tru]"#,
        #"2["a",nulls]"#,
        #"2["a",True]"#,
        #"2["a" "b"]"#,
        #"2["a","unterminated]"#,
        #"2["a",[1,2]"#,
        #"2["a",{"k":1]"#,
        #"0{"a":1,}"#,
        #"0{"a"}"#,
        #"0{"a":}"#,
        #"0{a:1}"#,
        #"0{"a":1 "b":2}"#,
        #"0{,}"#,
        #"2[,"a"]"#,
        #"2["a",,1]"#,
        // ACK
        "3",
        "31",
        "3/admin,456",
        "3{}",
        "3\"a\"",
        "3null",
        "31{}",
        "3[",
        // BINARY_EVENT / BINARY_ACK
        "5[\"a\"]",
        "5-[\"a\"]",
        "5a-[\"a\"]",
        "51[\"a\"]",
        "51",
        "51-",
        "51-{}",
        "51-[]",
        "51-[1]",
        "51-[\"connect\"]",
        "5/admin,[\"a\"]",
        "51-/admin,abc[\"a\"]",
        "51-[\"a\",{\"_placeholder\":true,\"num\":1}]",
        "51-[\"a\",{\"_placeholder\":true,\"num\":-1}]",
        "51-[\"a\",{\"_placeholder\":true,\"num\":0.5}]",
        "51-[\"a\",{\"_placeholder\":true,\"num\":\"0\"}]",
        "51-[\"a\",{\"_placeholder\":true}]",
        "51-[\"a\",{\"_placeholder\":true,\"num\":null}]",
        "51-[\"a\",{\"x\":[{\"_placeholder\":true,\"num\":2}]}]",
        "50-[\"a\",{\"_placeholder\":true,\"num\":0}]",
        "6",
        "61-",
        "61-{}",
        "61-\"a\"",
        "6-[]",
        "61[]",
        "61-[{\"_placeholder\":true,\"num\":5}]",
        "61-/admin,456[{\"_placeholder\":true,\"num\":1}]",
        "61-/admin,1234567890123456[{\"_placeholder\":true,\"num\":0}]",
    ]

    @Test(arguments: malformed)
    func rejectsMalformedPacket(_ text: String) {
        var decoder = SocketPacketDecoder()
        let error = #expect(throws: SocketProtocolError.self) { try decoder.decode(text: text) }
        guard case .malformed? = error else {
            Issue.record("expected .malformed, got \(String(describing: error))")
            return
        }
        #expect(!decoder.isAwaitingAttachments)
    }

    @Test func rejectsOversizedTextFrame() throws {
        let padding = String(repeating: "x", count: 1_000_000)
        var decoder = SocketPacketDecoder()
        #expect(throws: SocketProtocolError.self) { try decoder.decode(text: #"2["a",""# + padding + #""]"#) }
        // Exactly at the bound is fine.
        let fits = #"2["a",""# + String(repeating: "x", count: 1_000_000 - 9) + #""]"#
        #expect(fits.utf8.count == 1_000_000)
        #expect(try decoder.decode(text: fits)?.type == .event)
    }

    @Test func deeplyNestedJSONFailsWithoutCrashing() {
        let depth = 100_000
        let text = "2[\"a\"," + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]"
        var decoder = SocketPacketDecoder()
        #expect(throws: SocketProtocolError.self) { try decoder.decode(text: text) }
    }

    @Test func nestingBeyondTheParserLimitIsMalformed() throws {
        // The event array itself is one level: 511 more levels fit, 512 more do not.
        let fits = "2[\"a\"," + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "]"
        #expect(try decodeComplete(fits)?.type == .event)
        let tooDeep = "2[\"a\"," + String(repeating: "{\"k\":[", count: 256) + String(repeating: "]}", count: 256) + "]"
        #expect(throws: SocketProtocolError.self) { try decodeComplete(tooDeep) }
    }

    @Test func moderatelyNestedJSONIsAccepted() throws {
        let depth = 100
        let text = "2[\"a\"," + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]"
        var expected: SocketValue = .array([])
        for _ in 1..<depth { expected = .array([expected]) }
        #expect(try decodeComplete(text)?.data == .array([.string("a"), expected]))
    }

    @Test func parsesJSONNumbersLikeJSONParse() throws {
        let packet = try decodeComplete(#"2["n",12345678901234567890,-0,1E2,1e-2,0.5e+1,-12.75,123456789012345,1234567890123456,9007199254740993]"#)
        let expected: [Double] = [1.2345678901234567e19, 0, 100, 0.01, 5, -12.75, 123_456_789_012_345, 1_234_567_890_123_456, 9_007_199_254_740_992]
        #expect(packet?.data == .array([.string("n")] + expected.map(SocketValue.number)))
        guard case .array(let values)? = packet?.data, case .number(let negativeZero) = values[2] else {
            Issue.record("unexpected shape")
            return
        }
        #expect(negativeZero.sign == .minus)
    }

    @Test func duplicateKeysKeepTheLastValueLikeJSONParse() throws {
        #expect(try decodeComplete(#"0{"a":1,"a":2}"#)?.data == .object(["a": .number(2)]))
    }

    @Test func loneSurrogateEscapesBecomeReplacementCharacters() throws {
        let packet = try decodeComplete(#"2["s","x\ud83d","\ude00y","\ud83d\ud83d\ude00","\ud83d\n"]"#)
        #expect(packet?.data == .array([.string("s"), .string("x\u{FFFD}"), .string("\u{FFFD}y"), .string("\u{FFFD}😀"), .string("\u{FFFD}\n")]))
    }

    @Test func booleansStayBooleansAndNumbersStayNumbers() throws {
        #expect(
            try decodeComplete(#"3[true,1,false,0,null,"true"]"#)?.data == .array([.bool(true), .number(1), .bool(false), .number(0), .null, .string("true")]))
    }
}
