import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The signing keys of an identity provider, fetched from its JWKS URL and kept fresh, so
/// that a provider's key rotation needs no restart.
///
/// - Fetched at start and again when the answer's `Cache-Control` says it is stale (within
///   `auth.jwks_min_refetch_seconds` … a day; an hour when the provider says nothing).
/// - Fetched at once when a token names a `kid` the set does not have (the provider rotated
///   early), at most once per `jwks_min_refetch_seconds`: a stream of tokens with made-up
///   `kid`s costs the provider one request per interval, not one per token.
/// - A failed fetch (provider down, an answer that is not a JWKS) keeps the last good set,
///   and is tried again sooner than a good one (after the minimum interval, then doubling
///   up to five minutes).
///
/// Why a `Service`: the refresh is a long-lived loop, and async-http-client must be shut
/// down after the last fetch.
public final class RemoteJWKS: Service, Sendable {
    /// One answer of the provider.
    public struct Document: Sendable {
        public var json: String
        public var cacheControl: CacheControl

        public init(json: String, cacheControl: CacheControl) {
            self.json = json
            self.cacheControl = cacheControl
        }
    }

    public typealias Fetch = @Sendable () async throws -> Document

    private struct State {
        var lastAttempt: ContinuousClock.Instant?
        var refreshAt: ContinuousClock.Instant
        var failures = 0
    }

    let ring = PublicKeyRing()
    private let fetch: Fetch
    private let minRefetch: Duration
    private let logger: Logger
    private let gate = AsyncSerialGate()
    private let rescheduled = WakeSignal()
    private let state: Mutex<State>
    private let http: JWKSHTTPClient?
    /// Told when a key left the set (the verifier forgets the tokens it accepted).
    private let removed = Mutex<(@Sendable () -> Void)?>(nil)

    static let maxCache: Duration = .seconds(86_400)
    static let defaultCache: Duration = .seconds(3_600)
    static let maxRetry: Duration = .seconds(300)
    static let maxBytes = 1 << 20

    /// Keys from `url` over HTTPS (plain HTTP only to a loopback address: see `AuthConfig`).
    public convenience init(url: String, minRefetch: Duration, logger: Logger) {
        let http = JWKSHTTPClient()
        self.init(minRefetch: minRefetch, logger: logger, http: http) {
            try await http.get(url, maxBytes: Self.maxBytes, timeout: .seconds(10))
        }
    }

    /// Keys from any source (tests).
    public convenience init(minRefetch: Duration, logger: Logger, fetch: @escaping Fetch) {
        self.init(minRefetch: minRefetch, logger: logger, http: nil, fetch: fetch)
    }

    private init(minRefetch: Duration, logger: Logger, http: JWKSHTTPClient?, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.minRefetch = minRefetch
        self.logger = logger
        self.http = http
        state = Mutex(State(refreshAt: .now))
    }

    func onKeysRemoved(_ action: @escaping @Sendable () -> Void) {
        removed.withLock { $0 = action }
    }

    /// Fetches the set now; false when the fetch failed (the last good set stays).
    @discardableResult
    public func refresh() async -> Bool {
        let started = ContinuousClock.now
        state.withLock { $0.lastAttempt = started }
        do {
            let document = try await fetch()
            let keys = try await TokenVerifier.loadPublicKeys(document.json)
            if ring.replace(with: keys) { removed.withLock { $0 }?() }
            let fresh = document.cacheControl.maxAgeSeconds.map { Duration.seconds($0) } ?? Self.defaultCache
            state.withLock { state in
                state.failures = 0
                state.refreshAt = started + min(max(fresh, minRefetch), Self.maxCache)
            }
            rescheduled.signal()
            logger.debug("JWKS fetched", metadata: ["keys": "\(keys.kids.count)"])
            return true
        } catch {
            let retry = state.withLock { state -> Duration in
                state.failures += 1
                let wait = min(minRefetch * (1 << min(state.failures - 1, 8)), Self.maxRetry)
                state.refreshAt = started + wait
                return wait
            }
            rescheduled.signal()
            logger.warning(
                "the JWKS could not be fetched; the last good keys stay in force",
                metadata: ["error": "\(error)", "retry_seconds": "\(retry.components.seconds)", "has_keys": "\(ring.current != nil)"])
            return false
        }
    }

    /// A token named a `kid` the set does not have: fetch again, unless a fetch started
    /// within the minimum interval (then the caller checks against the set as it is).
    func keyMissing() async {
        _ = try? await gate.run {
            let recent = state.withLock { state in
                state.lastAttempt.map { ContinuousClock.now - $0 < minRefetch } ?? false
            }
            if !recent { await refresh() }
        }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let wait = state.withLock { $0.refreshAt } - ContinuousClock.now
            if wait > .zero {
                // A fetch for an unknown kid moves the due time (sooner, when the provider now
                // says a shorter max-age) and wakes this wait to look again.
                await cancelWhenGracefulShutdown { await self.rescheduled.wait(for: wait) }
                continue
            }
            _ = try? await gate.run { await refresh() }
        }
        await close()
    }

    /// Releases the HTTP client (done by `run` at shutdown; for one-off use such as `herald doctor`).
    public func close() async {
        await http?.shutdown()
    }

    /// How many keys are in force (nil: none has been fetched yet).
    public var keyCount: Int? { ring.current?.kids.count }
}

/// The HTTP side of `RemoteJWKS`: one client, made on the first fetch, shut down with the service.
final class JWKSHTTPClient: Sendable {
    private let box = Mutex<(client: HTTPClient?, closed: Bool)>((nil, false))

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func get(_ url: String, maxBytes: Int, timeout: Duration) async throws -> RemoteJWKS.Document {
        let client = try box.withLock { box -> HTTPClient in
            if let client = box.client { return client }
            guard !box.closed else { throw Failure(description: "shutting down") }
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            box.client = client
            return client
        }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Herald (JWKS)")
        let response = try await client.execute(request, deadline: .now() + .milliseconds(timeout.wholeMilliseconds))
        guard response.status == .ok else { throw Failure(description: "the JWKS URL answered \(response.status.code)") }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw Failure(description: "the JWKS is larger than \(maxBytes) bytes")
        }
        return .init(json: String(buffer: body), cacheControl: CacheControl(header: response.headers.first(name: "cache-control")))
    }

    func shutdown() async {
        let client = box.withLock { box -> HTTPClient? in
            box.closed = true
            defer { box.client = nil }
            return box.client
        }
        try? await client?.shutdown()
    }
}
