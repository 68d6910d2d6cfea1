import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldGTFS
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Fetches feeds over HTTP with a conditional GET: the validators of the last good fetch go
/// out as `If-None-Match` / `If-Modified-Since`, so an unchanged feed costs one request and
/// a `304`. Bodies are bounded (a feed larger than the limit is refused while it streams)
/// and every request has a deadline.
///
/// Why a Service: async-http-client must be shut down explicitly; in the ServiceGroup it is
/// shut down after the loops that use it have stopped. The client is made on the first
/// fetch, so a server that fetches nothing holds no client (and has none to shut down).
public final class FeedFetcher: Service, Sendable {
    public enum Outcome: Sendable, Equatable {
        case notModified
        case fetched(body: Data, etag: String?, lastModified: String?)
    }

    public enum FetchError: Error, Equatable, Sendable, CustomStringConvertible {
        case status(Int)
        case tooLarge(limit: Int)
        case timeout
        case transport(String)

        public var description: String {
            switch self {
            case .status(let code): "the server answered \(code)"
            case .tooLarge(let limit): "the body is larger than \(limit) bytes"
            case .timeout: "no answer in time"
            case .transport(let detail): "the request failed: \(detail)"
            }
        }
    }

    private let box = Mutex<(client: HTTPClient?, closed: Bool)>((nil, false))

    public init() {}

    func client() throws(FetchError) -> HTTPClient {
        try box.withLock { box throws(FetchError) -> HTTPClient in
            if let client = box.client { return client }
            guard !box.closed else { throw FetchError.transport("shutting down") }
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .automatic
            configuration.redirectConfiguration = .follow(max: 5, allowCycles: false)
            // Feeds are often served gzip-encoded; GTFS zips are not, and a zip is bounded below.
            configuration.decompression = .enabled(limit: .ratio(100))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            box.client = client
            return client
        }
    }

    /// GETs `url`; `etag`/`lastModified` make it conditional.
    public func fetch(
        _ url: String, etag: String? = nil, lastModified: String? = nil, headers: [String: String] = [:], maxBytes: Int, timeout: Duration
    ) async throws(FetchError) -> Outcome {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request.headers.add(name: name, value: value) }
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        request.headers.add(name: "User-Agent", value: "Herald (GTFS)")
        let deadline = NIODeadline.now() + .milliseconds(timeout.wholeMilliseconds)
        let client = try client()
        do {
            let response = try await client.execute(request, deadline: deadline)
            if response.status == .notModified { return .notModified }
            guard response.status == .ok else { throw FetchError.status(Int(response.status.code)) }
            if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > maxBytes {
                throw FetchError.tooLarge(limit: maxBytes)
            }
            let body: ByteBuffer
            do {
                body = try await response.body.collect(upTo: maxBytes)
            } catch is NIOTooManyBytesError {
                throw FetchError.tooLarge(limit: maxBytes)
            }
            return .fetched(
                body: Data(buffer: body), etag: response.headers.first(name: "etag"), lastModified: response.headers.first(name: "last-modified"))
        } catch let error as FetchError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw .timeout
        } catch {
            throw .transport(String(describing: error))
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    public func shutdown() async {
        let client = box.withLock { box -> HTTPClient? in
            box.closed = true
            defer { box.client = nil }
            return box.client
        }
        try? await client?.shutdown()
    }
}
