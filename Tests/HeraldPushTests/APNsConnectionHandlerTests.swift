import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Synchronization
import Testing

@testable import HeraldPush

/// The NIO handler around `APNsStreams`, in an `EmbeddedChannel`: requests and HTTP/2 frames
/// in, frames written and promises completed out.
@Suite struct APNsConnectionHandlerTests {
    final class Unusable: Sendable {
        let count = Atomic<Int>(0)
    }

    static func connection() throws -> (EmbeddedChannel, APNsConnectionHandler, Unusable) {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let unusable = Unusable()
        let handler = APNsConnectionHandler(authority: "api.push.apple.com", sweepInterval: .seconds(1)) {
            unusable.count.add(1, ordering: .relaxed)
        }
        try channel.pipeline.syncOperations.addHandler(handler)
        return (channel, handler, unusable)
    }

    static func submit(_ handler: APNsConnectionHandler, on channel: EmbeddedChannel, deadline: NIODeadline = .now() + .seconds(30))
        -> EventLoopFuture<PushHTTP.Response>
    {
        let promise = channel.eventLoop.makePromise(of: PushHTTP.Response.self)
        handler.submit(
            path: "/3/device/abc", headers: HPACKHeaders([("apns-topic", "com.example.app")]), body: ByteBuffer(string: #"{"aps":{}}"#),
            deadline: deadline, promise: promise)
        return promise.futureResult
    }

    static func written(_ channel: EmbeddedChannel) throws -> [HTTP2Frame] {
        channel.embeddedEventLoop.run()  // the flush scheduled for the tick
        var frames: [HTTP2Frame] = []
        while let frame = try channel.readOutbound(as: HTTP2Frame.self) { frames.append(frame) }
        return frames
    }

    @Test func aRequestIsOneHeadersAndOneDataFrameAndItsAnswerCompletesIt() throws {
        let (channel, handler, _) = try Self.connection()
        let answer = Self.submit(handler, on: channel)
        let frames = try Self.written(channel)
        #expect(frames.count == 2 && frames.allSatisfy { $0.streamID == 1 })
        guard case .headers(let headers) = frames.first?.payload, case .data(let data) = frames.last?.payload else {
            Issue.record("not HEADERS then DATA: \(frames)")
            return
        }
        #expect(headers.headers.first(name: ":method") == "POST" && headers.headers.first(name: ":path") == "/3/device/abc")
        #expect(headers.headers.first(name: ":authority") == "api.push.apple.com" && headers.headers.first(name: "apns-topic") == "com.example.app")
        #expect(!headers.endStream && data.endStream)
        try channel.writeInbound(
            HTTP2Frame(streamID: 1, payload: .headers(.init(headers: HPACKHeaders([(":status", "200"), ("apns-id", "A1")]), endStream: true))))
        let response = try answer.wait()
        #expect(response.status == 200 && response.headers.first(name: "apns-id") == "A1")
    }

    @Test func aRequestPastItsDeadlineTimesOutAndItsStreamIsReset() throws {
        let (channel, handler, _) = try Self.connection()
        let answer = Self.submit(handler, on: channel, deadline: .now() - .seconds(1))
        _ = try Self.written(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // the sweep
        #expect(throws: APNsTransportError.timeout) { try answer.wait() }
        let frames = try Self.written(channel)
        guard case .rstStream(let code) = frames.first?.payload else {
            Issue.record("no RST_STREAM: \(frames)")
            return
        }
        #expect(code == .cancel && frames.first?.streamID == 1)
    }

    /// GOAWAY: the request APNs never processed fails as safe to retry, the pool is told once,
    /// nothing new is taken, and the connection closes when the processed one is answered.
    @Test func goAwayFailsTheUnprocessedAndClosesWhenDrained() throws {
        let (channel, handler, unusable) = try Self.connection()
        let processed = Self.submit(handler, on: channel)
        let unprocessed = Self.submit(handler, on: channel)
        _ = try Self.written(channel)
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)))
        #expect(throws: APNsTransportError.connectionClosed(processed: false)) { try unprocessed.wait() }
        #expect(unusable.count.load(ordering: .relaxed) == 1)
        #expect(throws: APNsTransportError.connectionClosed(processed: false)) { try Self.submit(handler, on: channel).wait() }
        #expect(channel.isActive)
        try channel.writeInbound(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: HPACKHeaders([(":status", "200")]), endStream: true))))
        #expect(try processed.wait().status == 200)
        #expect(!channel.isActive, "closed once drained")
        #expect(unusable.count.load(ordering: .relaxed) == 1)
    }
}
