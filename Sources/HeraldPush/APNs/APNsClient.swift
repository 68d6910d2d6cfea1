import Foundation
import Logging
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Herald's HTTP/2 client for APNs: a few long-lived connections, each on its own event loop,
/// requests framed directly on the loop.
///
/// Why not async-http-client: per request it parses the URL, opens a tracing span, creates a
/// stream channel and flushes HEADERS and DATA separately, about 165 µs of CPU per push on
/// this hardware; APNs needs none of that. Why several connections: async-http-client puts
/// everything for a host on one HTTP/2 connection, so `push.apns.connections` did nothing;
/// here each connection is another socket and another event loop (core).
///
/// Requests that APNs certainly never saw (above a GOAWAY's last stream, refused, or written
/// to a connection that had just closed) are sent once more on another connection; anything
/// else that fails is reported to the worker, which retries with backoff.
public final class APNsClient: PushClient {
    let host: String
    let port: Int
    let authority: String
    private let tls: NIOSSLContext
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let connectionWindow: Int
    private let slots: [Slot]
    private let next = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    /// Why a connection could not be made is told to the operator (the worker records only
    /// `connection_error` on the delivery), at most every 10 s: an APNs outage fails every
    /// attempt, and the log must not grow with the retries.
    private let logger = Logger(label: "herald.push.apns")
    private let lastConnectFailureLog = Atomic<Int64>(0)

    /// One connection's place in the pool: the live connection or the attempt to make one.
    final class Slot: Sendable {
        enum State {
            case empty
            case connecting(EventLoopFuture<APNsConnection>)
            case ready(APNsConnection)
        }

        let state = Mutex<State>(.empty)
    }

    /// - Parameters:
    ///   - baseURL: `https://api.push.apple.com`, the sandbox, or a mock's URL.
    ///   - caFile: extra trusted certificates in PEM (a mock provider's self-signed one).
    ///   - connections: sockets kept open to APNs (Apple allows many; each takes up to the
    ///     server's stream limit, 1,000 at Apple, at once).
    public init(
        baseURL: String, caFile: String? = nil, connections: Int = 2, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        connectTimeout: Duration = .seconds(10), connectionWindow: Int = 1 << 20
    ) throws {
        guard let url = URL(string: baseURL), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw APNsTransportError.connectFailed("the APNs URL \(baseURL.debugDescription) is not an https URL with a host")
        }
        self.host = host
        port = url.port ?? 443
        authority = url.port.map { "\(host):\($0)" } ?? host
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        if let caFile {
            configuration.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
        }
        tls = try NIOSSLContext(configuration: configuration)
        self.group = group
        self.connectTimeout = .milliseconds(Int64(connectTimeout.wholeMilliseconds))
        self.connectionWindow = connectionWindow
        slots = (0..<max(1, connections)).map { _ in Slot() }
    }

    /// Sends one POST and returns APNs's answer, or throws `APNsTransportError` (a timeout
    /// after `timeout`, a connection that failed).
    public func post(path: String, headers: HPACKHeaders, body: ByteBuffer, timeout: Duration) async throws -> PushHTTP.Response {
        try await request(method: "POST", path: path, headers: headers, body: body, timeout: timeout)
    }

    /// Any request (the broadcast channel API also reads and deletes); `body` nil sends none.
    public func request(method: String, path: String, headers: HPACKHeaders, body: ByteBuffer?, timeout: Duration) async throws -> PushHTTP.Response {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout.wholeMilliseconds) * 1_000_000)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let connection = try await connection()
                return try await connection.request(method: method, path: path, headers: headers, body: body, deadline: deadline)
            } catch let error as APNsTransportError where error.neverProcessed && attempt < 3 && NIODeadline.now() < deadline {
                continue
            }
        }
    }

    /// Round robin over the slots; a slot without a usable connection makes one, and callers
    /// arriving meanwhile wait for that same attempt.
    func connection() async throws -> APNsConnection {
        guard !closed.load(ordering: .relaxed) else { throw APNsTransportError.connectionClosed(processed: false) }
        let slot = slots[Int(UInt(bitPattern: next.wrappingAdd(1, ordering: .relaxed).oldValue) % UInt(slots.count))]
        enum Found {
            case ready(APNsConnection)
            case wait(EventLoopFuture<APNsConnection>)
        }
        let found = slot.state.withLock { state -> Found in
            switch state {
            case .ready(let connection) where connection.isUsable:
                return .ready(connection)
            case .connecting(let task):
                return .wait(task)
            case .ready, .empty:
                let future = self.makeConnection(for: slot)
                state = .connecting(future)
                return .wait(future)
            }
        }
        switch found {
        case .ready(let connection): return connection
        case .wait(let future): return try await future.get()
        }
    }

    /// Called with the slot locked; the completion callbacks take the lock later, on the loop.
    private func makeConnection(for slot: Slot) -> EventLoopFuture<APNsConnection> {
        let future = APNsConnection.connect(
            host: host, port: port, authority: authority, tls: tls, eventLoop: group.next(), connectTimeout: connectTimeout,
            connectionWindow: connectionWindow)
        future.whenComplete { result in
            if case .failure(let error) = result { self.logConnectFailure(error) }
            let connection = try? result.get()
            slot.state.withLock { $0 = connection.map { .ready($0) } ?? .empty }
            if let connection, self.closed.load(ordering: .relaxed) { connection.channel.close(promise: nil) }
        }
        return future
    }

    private func logConnectFailure(_ error: any Error) {
        let now = Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000)
        let last = lastConnectFailureLog.load(ordering: .relaxed)
        guard last == 0 || now - last >= 10_000,
            lastConnectFailureLog.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return }
        logger.warning("cannot connect to APNs", metadata: ["endpoint": "\(authority)", "error": "\(error)"])
    }

    /// Closes every connection; requests in flight fail with `connectionClosed`.
    public func shutdown() async {
        closed.store(true, ordering: .relaxed)
        for slot in slots {
            let connection: APNsConnection? = slot.state.withLock { state in
                if case .ready(let connection) = state { return connection }
                return nil
            }
            await connection?.close()
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}
