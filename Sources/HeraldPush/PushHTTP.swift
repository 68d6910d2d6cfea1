import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
import ServiceLifecycle

/// One provider's HTTP client: HTTP/2 when the server offers it (APNs requires it; FCM and
/// Web Push services accept it), pooled connections, a deadline on every request, and a
/// bounded response body.
///
/// Why a Service: async-http-client must be shut down explicitly; running it in the
/// application's ServiceGroup shuts it down after the delivery worker has stopped.
public final class PushHTTP: PushClient {
    public let client: HTTPClient

    /// - Parameters:
    ///   - caFile: a PEM file of extra trusted certificates (a mock provider's self-signed one).
    ///   - connectionsPerHost: connections kept to one host (HTTP/2 multiplexes on each).
    public init(caFile: String? = nil, connectionsPerHost: Int = 2) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(
            idleTimeout: .seconds(300), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, connectionsPerHost))
        configuration.decompression = .disabled
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// A provider's answer.
    public struct Response: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: Data

        public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public init(status: Int, headers: HTTPHeaders, bytes: [UInt8]) {
            self.init(status: status, headers: headers, body: bytes.isEmpty ? Data() : Data(bytes))
        }

        /// The body as a JSON object (providers answer errors as JSON), or nil.
        public var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: body) }

        /// `Retry-After` in seconds or as an HTTP date, as a duration from `now`.
        public func retryAfter(now: Date) -> Duration? {
            guard let value = headers.first(name: "retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
            if let seconds = Int(value), seconds >= 0 { return .seconds(min(seconds, 86_400)) }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            guard let date = formatter.date(from: value) else { return nil }
            return .seconds(max(0, min(86_400, Int(date.timeIntervalSince(now).rounded(.up)))))
        }
    }

    /// Sends `request`, reading at most `maxBody` bytes of the answer, within `timeout`.
    ///
    /// The deadline is async-http-client's own (covering the request and the response), not a
    /// `withDeadline` around it: every such wrapper keeps a timer alive for its whole timeout,
    /// which at thousands of sends per second was most of the worker's memory (see
    /// BENCHMARKS.md, push delivery). The worker still bounds each delivery as a whole.
    public func execute(_ request: HTTPClientRequest, timeout: Duration, maxBody: Int = 64 * 1024) async throws -> Response {
        let deadline = NIODeadline.now() + .milliseconds(timeout.wholeMilliseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            let body = try await response.body.collect(upTo: maxBody)
            return Response(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            // One name for "the provider did not answer in time", whichever client noticed.
            throw DeadlineExceeded()
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }

    public func shutdown() async {
        try? await client.shutdown()
    }

}

/// A provider connection pool the server runs as a Service and must close when a
/// configuration turns out unusable before the service group starts.
public protocol PushClient: Service, Sendable {
    func shutdown() async
}
