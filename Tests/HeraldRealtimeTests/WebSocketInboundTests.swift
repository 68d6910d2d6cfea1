import NIOCore
import Testing

@testable import HeraldRealtime

/// RFC 6455's rules for what a server reads, frame by frame: the actions the connection
/// handler carries out, without a socket.
@Suite struct WebSocketInboundTests {
    static let limits = WebSocketLimits(maxMessageBytes: 64, unauthenticatedMaxMessageBytes: 8, partialMessageTimeout: .seconds(5))

    static func frame(_ opcode: UInt8, _ text: String, fin: Bool = true) -> WebSocketFrameReader.Frame {
        WebSocketFrameReader.Frame(fin: fin, opcode: opcode, payload: ByteBuffer(string: text))
    }

    @Test func fragmentsAreJoinedIntoOneMessage() {
        var inbound = WebSocketInbound(limits: Self.limits)
        #expect(inbound.received(Self.frame(0x1, "hel", fin: false)) { false } == .none)
        #expect(inbound.isUnfinished)
        #expect(inbound.received(Self.frame(0x9, "ping")) { false } == .pong(ByteBuffer(string: "ping")), "a control frame may come between fragments")
        #expect(inbound.received(Self.frame(0x0, "lo", fin: false)) { false } == .none)
        #expect(inbound.received(Self.frame(0x0, "!")) { false } == .deliver(.text("hello!")))
        #expect(!inbound.isUnfinished)
        #expect(
            inbound.received(WebSocketFrameReader.Frame(fin: true, opcode: 0x2, payload: ByteBuffer(bytes: [0, 255]))) { false } == .deliver(.binary([0, 255])))
    }

    @Test func protocolViolationsEndTheConnectionWithTheirCodes() {
        var inbound = WebSocketInbound(limits: Self.limits)
        #expect(inbound.received(Self.frame(0x0, "x")) { false } == .close(code: 1002), "a continuation with nothing to continue")
        _ = inbound.received(Self.frame(0x1, "a", fin: false)) { false }
        #expect(inbound.received(Self.frame(0x1, "b")) { false } == .close(code: 1002), "a new message inside a fragmented one")
        #expect(!inbound.isUnfinished, "what the broken message held is dropped")
        let invalidUTF8 = WebSocketFrameReader.Frame(fin: true, opcode: 0x1, payload: ByteBuffer(bytes: [0xC3, 0x28]))
        #expect(inbound.received(invalidUTF8) { false } == .close(code: 1007))
        #expect(inbound.received(Self.frame(0x8, "")) { false } == .close(code: 1000))
        var code = ByteBuffer()
        code.writeInteger(UInt16(4001))
        #expect(
            inbound.received(WebSocketFrameReader.Frame(fin: true, opcode: 0x8, payload: code)) { false } == .close(code: 4001), "the client's code is echoed")
        #expect(inbound.received(Self.frame(0xA, "pong")) { false } == .none)
    }

    /// Until the peer authenticated, fragments may add up to the small limit only; after, to
    /// the full one (the receiver is asked only when the small limit is passed).
    @Test func fragmentsAreBoundedByWhatThePeerMaySend() {
        var stranger = WebSocketInbound(limits: Self.limits)
        _ = stranger.received(Self.frame(0x1, "12345", fin: false)) { false }
        #expect(stranger.received(Self.frame(0x0, "6789")) { false } == .close(code: 1009))
        #expect(stranger.messageLimit == 8)

        var member = WebSocketInbound(limits: Self.limits)
        var asked = 0
        _ = member.received(Self.frame(0x1, "12345", fin: false)) { false }
        #expect(
            member.received(Self.frame(0x0, "6789")) {
                asked += 1
                return true
            } == .deliver(.text("123456789")))
        #expect(asked == 1 && member.messageLimit == 64)
        _ = member.received(Self.frame(0x1, String(repeating: "a", count: 40), fin: false)) { true }
        #expect(member.received(Self.frame(0x0, String(repeating: "b", count: 30))) { true } == .close(code: 1009))
    }
}
