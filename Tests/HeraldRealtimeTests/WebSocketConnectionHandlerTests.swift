import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import HeraldRealtime

/// The NIO handler around `WebSocketInbound`, in an `EmbeddedChannel`: client bytes in,
/// the bytes written and the receiver's calls out.
@Suite struct WebSocketConnectionHandlerTests {
    final class Receiver: WebSocketReceiver {
        private let state = Mutex<(messages: [InboundFrame], closed: Bool?)>(([], nil))
        var messages: [InboundFrame] { state.withLock { $0.messages } }
        var closedWithError: Bool? { state.withLock { $0.closed } }
        var isAuthenticated: Bool { false }
        func received(_ frame: InboundFrame) { state.withLock { $0.messages.append(frame) } }
        func outboundFinished(_ reason: OutboundQueue.CloseReason) {}
        func transportClosed(error: Bool) { state.withLock { $0.closed = error } }
        func shouldQuiesce() {}
    }

    static func served() throws -> (EmbeddedChannel, Receiver) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let receiver = Receiver()
        let limits = WebSocketLimits(maxMessageBytes: 1_000, unauthenticatedMaxMessageBytes: 16, partialMessageTimeout: .seconds(5))
        try WebSocketPipeline.serve(channel, acceptor: { _ in receiver }, limits: limits)
        return (channel, receiver)
    }

    static func client(_ first: UInt8, _ payload: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: WebSocketFrameReaderTests.frame(first, payload))
    }

    static func written(_ channel: EmbeddedChannel) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        return bytes
    }

    @Test func messagesReachTheReceiverAndPingsArePonged() throws {
        let (channel, receiver) = try Self.served()
        // One frame split over two reads, then a fragmented message and a ping in one read.
        var first = Self.client(0x81, Array("hello".utf8))
        let head = first.readSlice(length: 4)!
        try channel.writeInbound(head)
        #expect(receiver.messages.isEmpty)
        try channel.writeInbound(first)
        var more = Self.client(0x01, Array("wor".utf8))
        more.writeImmutableBuffer(Self.client(0x89, [7, 8]))
        more.writeImmutableBuffer(Self.client(0x80, Array("ld".utf8)))
        try channel.writeInbound(more)
        #expect(receiver.messages == [.text("hello"), .text("world")])
        #expect(try Self.written(channel) == [0x8A, 2, 7, 8], "an unmasked pong with the ping's payload")
        #expect(channel.isActive)
    }

    @Test func aCloseFrameIsEchoedAndTheConnectionEnds() throws {
        let (channel, receiver) = try Self.served()
        try channel.writeInbound(Self.client(0x88, [0x03, 0xE8]))
        #expect(try Self.written(channel) == [0x88, 2, 0x03, 0xE8])
        #expect(!channel.isActive)
        #expect(receiver.closedWithError == false)
    }

    @Test func aStrangersOversizedMessageIsRefusedWith1009() throws {
        let (channel, receiver) = try Self.served()
        try channel.writeInbound(Self.client(0x81, Array(repeating: UInt8(ascii: "a"), count: 17)))
        #expect(try Self.written(channel) == [0x88, 2, 0x03, 0xF1])
        #expect(receiver.messages.isEmpty && !channel.isActive)
    }

    @Test func aMessageLeftUnfinishedPastTheDeadlineIsClosedWith1008() throws {
        let (channel, receiver) = try Self.served()
        try channel.writeInbound(Self.client(0x01, Array("par".utf8)))
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(channel.isActive, "within the deadline")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try Self.written(channel) == [0x88, 2, 0x03, 0xF0])
        #expect(receiver.messages.isEmpty && !channel.isActive)
    }
}
