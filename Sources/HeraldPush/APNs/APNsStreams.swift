import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One APNs connection's requests as a value: which streams wait for what, and what each
/// frame, deadline or close does to them. `APNsConnectionHandler` writes the frames and
/// completes the promises the returned actions name.
///
/// Why apart from the handler: the rules — a 1xx answer is not the final one, a GOAWAY fails
/// only the streams APNs never processed, REFUSED_STREAM is safe to send again, a connection
/// stops taking requests once it is going away and closes when its last one is answered —
/// are tested frame by frame without a socket or TLS. Generic over the waiter (the handler's
/// `EventLoopPromise`) so the tests can use plain values, as swift-nio's and postgres-nio's
/// state machines are.
struct APNsStreams<Waiter> {
    struct Stream {
        var waiter: Waiter
        var deadline: NIODeadline
        var status: Int?
        var headers: HTTPHeaders = [:]
        var body: ByteBuffer?
    }

    /// What an answer's frame leads to.
    enum Answer {
        case none
        case succeed(Waiter, PushHTTP.Response)
        case fail(Waiter, APNsTransportError)
        /// The answer is refused (too large): fail it and reset its stream.
        case failAndReset(Waiter, APNsTransportError, HTTP2StreamID)
    }

    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID: Int
    /// False after GOAWAY, a close, or stream-id exhaustion: no new requests here.
    private(set) var usable = true

    init(firstStreamID: Int = 1) {
        nextStreamID = firstStreamID
    }

    var pendingCount: Int { streams.count }

    /// Once unusable and nothing waits, the connection is closed.
    var shouldClose: Bool { !usable && streams.isEmpty }

    /// A new request: its stream id, or nil when this connection takes no more (fail it with
    /// `connectionClosed(processed: false)`). `becameUnusable` is true the one time the
    /// connection stops taking requests, so its pool can open another.
    mutating func open(_ waiter: Waiter, deadline: NIODeadline) -> (stream: HTTP2StreamID?, becameUnusable: Bool) {
        guard usable else { return (nil, false) }
        guard nextStreamID <= APNsStreamLimits.lastStreamID else { return (nil, markUnusable()) }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        streams[streamID] = Stream(waiter: waiter, deadline: deadline)
        return (streamID, false)
    }

    mutating func headers(_ headers: HPACKHeaders, endStream: Bool, on streamID: HTTP2StreamID) -> Answer {
        guard var stream = streams[streamID] else { return .none }
        for (name, value, _) in headers {
            if name == ":status" {
                stream.status = Int(value)
            } else if !name.hasPrefix(":") {
                stream.headers.add(name: name, value: value)
            }
        }
        // A 1xx answer is informational; the final one follows.
        if let status = stream.status, status < 200, !endStream {
            stream.status = nil
        }
        guard endStream else {
            streams[streamID] = stream
            return .none
        }
        streams.removeValue(forKey: streamID)
        return Self.complete(stream)
    }

    mutating func data(_ bytes: ByteBuffer, endStream: Bool, on streamID: HTTP2StreamID) -> Answer {
        guard var stream = streams[streamID] else { return .none }
        var bytes = bytes
        if (stream.body?.readableBytes ?? 0) + bytes.readableBytes > APNsStreamLimits.maxBody {
            streams.removeValue(forKey: streamID)
            return .failAndReset(stream.waiter, .responseTooLarge, streamID)
        }
        if stream.body == nil {
            stream.body = bytes
        } else {
            stream.body!.writeBuffer(&bytes)
        }
        guard endStream else {
            streams[streamID] = stream
            return .none
        }
        streams.removeValue(forKey: streamID)
        return Self.complete(stream)
    }

    /// RST_STREAM from APNs. REFUSED_STREAM means it did nothing with it (RFC 9113 §8.7):
    /// safe to send elsewhere.
    mutating func reset(_ code: HTTP2ErrorCode, on streamID: HTTP2StreamID) -> Answer {
        guard let stream = streams.removeValue(forKey: streamID) else { return .none }
        return .fail(stream.waiter, .streamReset(code: "\(code)", processed: code == .refusedStream ? false : nil))
    }

    /// GOAWAY: no new requests; the streams above the last one APNs processed were never
    /// acted on and fail as such (safe to send again).
    mutating func goAway(lastStreamID: HTTP2StreamID) -> (failed: [Waiter], becameUnusable: Bool) {
        let becameUnusable = markUnusable()
        var failed: [Waiter] = []
        for streamID in streams.keys where streamID > lastStreamID {
            if let stream = streams.removeValue(forKey: streamID) { failed.append(stream.waiter) }
        }
        return (failed, becameUnusable)
    }

    /// The requests whose deadline passed by `now`: each fails with `timeout` and its stream
    /// is reset.
    mutating func expire(now: NIODeadline) -> [(waiter: Waiter, stream: HTTP2StreamID)] {
        var expired: [(waiter: Waiter, stream: HTTP2StreamID)] = []
        for (streamID, stream) in streams where stream.deadline <= now {
            streams.removeValue(forKey: streamID)
            expired.append((stream.waiter, streamID))
        }
        return expired
    }

    /// The connection ended (closed, failed, or refused HTTP/2): every waiting request fails.
    mutating func closed() -> (failed: [Waiter], becameUnusable: Bool) {
        let becameUnusable = markUnusable()
        let failed = streams.values.map(\.waiter)
        streams.removeAll()
        return (failed, becameUnusable)
    }

    /// True the first time only.
    private mutating func markUnusable() -> Bool {
        guard usable else { return false }
        usable = false
        return true
    }

    private static func complete(_ stream: Stream) -> Answer {
        guard let status = stream.status else { return .fail(stream.waiter, .malformedResponse) }
        let body = stream.body.map { Array($0.readableBytesView) } ?? []
        return .succeed(stream.waiter, PushHTTP.Response(status: status, headers: stream.headers, bytes: body))
    }
}

enum APNsStreamLimits {
    /// Largest error body kept (APNs's are well under 100 bytes).
    static let maxBody = 16 * 1024
    /// The last client stream id HTTP/2 allows is 2^31 − 1; a connection this close to it takes
    /// no new requests and closes when its last one is answered.
    static let lastStreamID = Int(Int32.max) - 2
}
