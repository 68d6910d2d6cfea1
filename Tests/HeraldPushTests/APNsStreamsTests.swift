import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import HeraldPush

/// One APNs connection's requests, frame by frame: what each answer, reset, GOAWAY, deadline
/// or close does to the requests waiting on it.
@Suite struct APNsStreamsTests {
    typealias Streams = APNsStreams<String>
    static let later = NIODeadline.uptimeNanoseconds(10_000_000_000)

    static func headers(_ status: String, _ extra: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":status", status)] + extra)
    }

    static func succeeded(_ answer: Streams.Answer) -> (String, PushHTTP.Response)? {
        if case .succeed(let waiter, let response) = answer { return (waiter, response) }
        return nil
    }

    static func failed(_ answer: Streams.Answer) -> (String, APNsTransportError)? {
        if case .fail(let waiter, let error) = answer { return (waiter, error) }
        return nil
    }

    @Test func requestsGetOddStreamsAndTheirOwnAnswers() throws {
        var streams = Streams()
        let a = try #require(streams.open("a", deadline: Self.later).stream)
        let b = try #require(streams.open("b", deadline: Self.later).stream)
        #expect(a == 1 && b == 3 && streams.pendingCount == 2)
        // b is answered first: 400 with a JSON body in two DATA frames; a with 200 and no body.
        #expect(Self.succeeded(streams.headers(Self.headers("400", [("apns-id", "X")]), endStream: false, on: b)) == nil)
        #expect(Self.succeeded(streams.data(ByteBuffer(string: #"{"reason":"#), endStream: false, on: b)) == nil)
        let (waiterB, responseB) = try #require(Self.succeeded(streams.data(ByteBuffer(string: #""BadDeviceToken"}"#), endStream: true, on: b)))
        #expect(waiterB == "b" && responseB.status == 400 && responseB.headers.first(name: "apns-id") == "X")
        #expect(String(decoding: responseB.body, as: UTF8.self) == #"{"reason":"BadDeviceToken"}"#)
        let (waiterA, responseA) = try #require(Self.succeeded(streams.headers(Self.headers("200"), endStream: true, on: a)))
        #expect(waiterA == "a" && responseA.status == 200 && responseA.body.isEmpty)
        #expect(streams.pendingCount == 0 && streams.usable && !streams.shouldClose)
        // A frame for a stream nobody waits on changes nothing.
        #expect(Self.succeeded(streams.headers(Self.headers("200"), endStream: true, on: a)) == nil)
    }

    @Test func anInformationalAnswerIsNotTheFinalOneAndNoStatusIsMalformed() throws {
        var streams = Streams()
        let a = try #require(streams.open("a", deadline: Self.later).stream)
        #expect(Self.succeeded(streams.headers(Self.headers("100"), endStream: false, on: a)) == nil)
        #expect(try #require(Self.succeeded(streams.headers(Self.headers("200"), endStream: true, on: a))).1.status == 200)
        let b = try #require(streams.open("b", deadline: Self.later).stream)
        #expect(try #require(Self.failed(streams.data(ByteBuffer(string: "x"), endStream: true, on: b))).1 == .malformedResponse)
    }

    @Test func anOversizedAnswerIsRefusedAndItsStreamReset() throws {
        var streams = Streams()
        let a = try #require(streams.open("a", deadline: Self.later).stream)
        _ = streams.headers(Self.headers("500"), endStream: false, on: a)
        _ = streams.data(ByteBuffer(repeating: 0x41, count: APNsStreamLimits.maxBody), endStream: false, on: a)
        guard case .failAndReset(let waiter, let error, let reset) = streams.data(ByteBuffer(string: "!"), endStream: true, on: a) else {
            Issue.record("the answer over the limit was not refused")
            return
        }
        #expect(waiter == "a" && error == .responseTooLarge && reset == a && streams.pendingCount == 0)
    }

    /// REFUSED_STREAM is the one reset APNs promises it did not act on.
    @Test func aRefusedStreamIsSafeToSendAgainAndOtherResetsAreNot() throws {
        var streams = Streams()
        let a = try #require(streams.open("a", deadline: Self.later).stream)
        let b = try #require(streams.open("b", deadline: Self.later).stream)
        let refused = try #require(Self.failed(streams.reset(.refusedStream, on: a)))
        #expect(refused.0 == "a" && refused.1.neverProcessed)
        let cancelled = try #require(Self.failed(streams.reset(.cancel, on: b)))
        #expect(cancelled.0 == "b" && !cancelled.1.neverProcessed)
    }

    /// GOAWAY fails the streams APNs never processed (safe to send again), keeps the others
    /// waiting for their answers, takes no new request, and closes when the last is answered.
    @Test func goAwayDrainsTheConnection() throws {
        var streams = Streams()
        let ids = try (1...3).map { try #require(streams.open("r\($0)", deadline: Self.later).stream) }
        let (failed, becameUnusable) = streams.goAway(lastStreamID: ids[0])
        #expect(Set(failed) == ["r2", "r3"] && becameUnusable)
        #expect(!streams.usable && !streams.shouldClose && streams.pendingCount == 1)
        #expect(streams.open("late", deadline: Self.later) == (nil, false))
        #expect(streams.goAway(lastStreamID: ids[0]).becameUnusable == false, "the pool is told once")
        _ = streams.headers(Self.headers("200"), endStream: true, on: ids[0])
        #expect(streams.shouldClose)
    }

    @Test func requestsPastTheirDeadlineTimeOut() throws {
        var streams = Streams()
        let soon = try #require(streams.open("soon", deadline: .uptimeNanoseconds(1_000)).stream)
        _ = try #require(streams.open("later", deadline: Self.later).stream)
        let expired = streams.expire(now: .uptimeNanoseconds(5_000))
        #expect(expired.map(\.waiter) == ["soon"] && expired.map(\.stream) == [soon])
        #expect(streams.pendingCount == 1 && streams.usable)
        let (failed, becameUnusable) = streams.closed()
        #expect(failed == ["later"] && becameUnusable && streams.shouldClose)
    }

    /// Near the last stream id HTTP/2 allows, the connection stops taking requests (once).
    @Test func theLastStreamIDEndsTheConnectionsUse() throws {
        var streams = Streams(firstStreamID: APNsStreamLimits.lastStreamID)
        let last = try #require(streams.open("last", deadline: Self.later).stream)
        #expect(Int(last) == APNsStreamLimits.lastStreamID)
        #expect(streams.open("over", deadline: Self.later) == (nil, true))
        #expect(streams.open("again", deadline: Self.later) == (nil, false))
        _ = streams.headers(Self.headers("200"), endStream: true, on: last)
        #expect(streams.shouldClose)
    }
}
