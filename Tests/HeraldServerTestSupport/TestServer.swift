import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// Builds the real application (`HeraldApplication.build`) on a fresh database and drives it.
public enum TestServer {
    public static let secret = "test-secret-0123456789abcdef0123456789abcdef"

    /// `configure` is escaping on purpose: a non-escaping closure called after the await
    /// above crashed debug test builds in `swift_release` of its captures (StripeFlowTests,
    /// twice under load); an escaping one lives on the heap.
    public static func config(_ engine: TestEngine, configure: @escaping (inout HeraldConfig) -> Void = { _ in }) async throws -> HeraldConfig {
        var config = HeraldConfig()
        config.dataDir = try TestDatabase.temporaryDirectory()
        config.database.url = try await TestDatabase.makeURL(engine)
        config.auth.jwtSecret = secret
        config.server.host = "127.0.0.1"
        config.server.port = 0
        // HummingbirdTesting's live client connects when the test starts and may send its
        // first request minutes later on a loaded machine; the head timeout itself is
        // tested against the real binary (Tests/e2e/test_hostile_connections.py).
        config.server.requestHeadTimeoutMs = 3_600_000
        config.server.idleTimeoutMs = 3_600_000
        config.server.requestBodyTimeoutMs = 3_600_000
        config.server.maxConnectionsPerClient = 0
        // Waits inside the server that a loaded machine can outlast (the suite runs its cases
        // at once on two cores, beside other work): a slow machine waits instead of failing.
        // Tests of these timeouts set their own values.
        config.database.acquireTimeoutMs = 600_000  // the maximum; 10 s gave DatabaseUnavailable(noConnection)
        // Small pools: about a hundred PostgreSQL cases share the test cluster's connections.
        config.database.maxConnections = 10
        config.database.backgroundConnections = 2
        config.idempotency.waitSeconds = 120  // the maximum
        config.push.requestTimeoutMs = 50_000  // below push.lease_seconds (60 s), as validation requires
        config.payments.stripe.timeoutSeconds = 120  // the maximum
        configure(&config)
        return config
    }

    /// Runs `body` against the application through Hummingbird's router test client
    /// (`.router`) or over a real loopback socket (`.live`).
    public static func run<T: Sendable>(
        _ engine: TestEngine,
        setup: TestingSetup = .router,
        clock: any HeraldClock = SystemClock(),
        configure: @escaping (inout HeraldConfig) -> Void = { _ in },
        logger: Logger = TestDatabase.logger,
        extraRoutes: (RouterGroup<HeraldRequestContext>) -> Void = { _ in },
        _ body: @Sendable @escaping (TestSession) async throws -> T
    ) async throws -> T {
        try await run(config: try await config(engine, configure: configure), setup: setup, clock: clock, logger: logger, extraRoutes: extraRoutes, body)
    }

    /// Runs `body` against an application on a given configuration: two runs on one
    /// configuration are one node restarted on the same database and data directory.
    public static func run<T: Sendable>(
        config: HeraldConfig,
        setup: TestingSetup = .router,
        clock: any HeraldClock = SystemClock(),
        logger: Logger = TestDatabase.logger,
        extraRoutes: (RouterGroup<HeraldRequestContext>) -> Void = { _ in },
        _ body: @Sendable @escaping (TestSession) async throws -> T
    ) async throws -> T {
        let (application, runtime) = try await HeraldApplication.build(
            config: config, clock: clock, logger: logger, extraRoutes: extraRoutes)
        let issuer = await TokenIssuer(secret: runtime.jwtSecret, config: config.auth, clock: clock)
        return try await application.test(setup) { client in
            // The node listens before its transit feeds are loaded (the reload loop loads
            // them): tests start once it is ready, however slow the machine.
            try await waitUntil("the transit feeds loaded", every: .milliseconds(5)) { runtime.transit.service.loader.isStarted }
            return try await body(TestSession(client: client, runtime: runtime, issuer: issuer))
        }
    }
}

/// One running test application: its HTTP client, its runtime and a token minter.
public struct TestSession: Sendable {
    public let client: any TestClientProtocol
    public let runtime: HeraldRuntime
    public let issuer: TokenIssuer

    public init(client: any TestClientProtocol, runtime: HeraldRuntime, issuer: TokenIssuer) {
        self.client = client
        self.runtime = runtime
        self.issuer = issuer
    }

    public func token(_ user: String, _ role: Role = .customer, ttl: TimeInterval = 3600) async throws -> String {
        try await issuer.issue(userID: user, role: role, ttl: ttl)
    }

    /// Sends a request; `json` is encoded as the body with `Content-Type: application/json`.
    @discardableResult
    public func request(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, headers: HTTPFields = [:],
        json: JSONValue? = nil, rawBody: String? = nil, bytes: Data? = nil
    ) async throws -> TestReply {
        var headers = headers
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: try JSONEncoder().encode(json))
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let rawBody {
            body = ByteBuffer(string: rawBody)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let bytes {
            body = ByteBuffer(bytes: bytes)
        }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body)
        return TestReply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: response.body))
    }
}

/// A response with its body parsed as JSON where it is JSON.
public struct TestReply: Sendable {
    public let status: Int
    public let headers: HTTPFields
    public let body: Data

    public var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: body) }
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var data: JSONValue? { json?["data"] }
    public var errorCode: String? { json?["error"]?["code"]?.stringValue }

    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }
}
