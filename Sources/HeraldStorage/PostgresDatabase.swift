import HeraldCore
import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// The shared engine for many nodes: a pooled `PostgresClient` whose `run()` is a Service in
/// the application's ServiceGroup (no connection is leased until it runs).
public final class PostgresDatabase: Database {
    public let engine = DatabaseEngine.postgres
    public let client: PostgresClient
    private let logger: Logger
    private let acquireTimeout: Duration
    /// The background lane's own pool; nil when none is configured (the pool serves all).
    private let backgroundPool: PostgresDatabase?

    /// - Parameter acquireTimeout: the longest wait for a pooled connection. While the server
    ///   is down (a restart, a failover) the pool keeps trying to connect; without a bound every
    ///   request and `/readyz` would wait with it.
    ///   - backgroundConnections: the size of the separate pool behind `background`; 0: none.
    public init(
        location: DatabaseURL.PostgresLocation, maxConnections: Int, backgroundConnections: Int = 0, acquireTimeout: Duration = .seconds(10),
        logger: Logger
    ) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username,
            password: location.password, database: location.database,
            tls: location.requireTLS ? .require(.makeClientConfiguration()) : .disable
        )
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = .seconds(5)
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
        self.acquireTimeout = acquireTimeout
        backgroundPool =
            backgroundConnections > 0
            ? PostgresDatabase(location: location, maxConnections: backgroundConnections, acquireTimeout: acquireTimeout, logger: logger) : nil
    }

    public var background: any Database { backgroundPool ?? self }

    public func withConnection<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await leased { connection in
            try await body(OpenConnectionSQL(connection, logger: logger))
        }
    }

    /// BEGIN, the body, COMMIT; ROLLBACK when the body throws. Not PostgresNIO's
    /// `withTransaction`: its ROLLBACK after a lost connection never returned (see
    /// `OpenConnectionSQL`). A connection lost at COMMIT leaves the outcome unknown: the caller
    /// gets `DatabaseUnavailable` (from `leased`, as for any lost connection) and retries with
    /// its `Idempotency-Key`.
    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await leased { connection in
            let sql = OpenConnectionSQL(connection, logger: logger)
            try await sql.raw("BEGIN").run()
            let value: T
            do {
                value = try await body(sql)
            } catch {
                // A lost connection has no transaction left to roll back.
                guard !Self.isConnectionLoss(error) else { throw error }
                do {
                    try await sql.raw("ROLLBACK").run()
                } catch {
                    logger.debug("rollback failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                throw error
            }
            try await sql.raw("COMMIT").run()
            return value
        }
    }

    /// Runs `body` on a pooled connection, waiting at most `acquireTimeout` for one. Once
    /// `body` has started it runs to its end: the timeout never cuts into work.
    private func leased<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = self.client
        let timeout = acquireTimeout
        do {
            return try await withoutActuallyEscaping(body) { body in
                let lease = LeaseRace()
                return try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask {
                        try await client.withConnection { connection in
                            guard lease.start() else { throw DatabaseUnavailable(.noConnection) }
                            return try await body(connection)
                        }
                    }
                    group.addTask {
                        try await CancellableSleep.sleep(for: timeout)
                        if lease.timeOut() { throw DatabaseUnavailable(.noConnection) }
                        return nil
                    }
                    defer { group.cancelAll() }
                    while let next = try await group.next() {
                        if let value = next { return value }
                    }
                    throw DatabaseUnavailable(.noConnection)
                }
            }
        } catch let error where !(error is DatabaseUnavailable) && Self.isConnectionLoss(error) {
            throw DatabaseUnavailable(.connectionLost)
        }
    }

    /// A failure of the connection rather than of the statement: the client may retry.
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if error is DatabaseUnavailable { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .poolClosed, .clientClosedConnection:
            // (A client-side close follows a FATAL from the server, or the pool closing: either
            // way the statement never ran to an answer.)
            return true
        case .server:
            // 08xxx connection exceptions; 57P01–57P03 the server shutting down or starting.
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default:
            return error.underlying.map(isConnectionLoss) ?? false
        }
    }

    public var service: (any Service)? {
        guard let backgroundPool else { return client }
        return PostgresPools(clients: [client, backgroundPool.client])
    }

    public func close() async {}
}

/// Who wins between a lease that starts its work and the acquire timeout: exactly one does.
private final class LeaseRace: Sendable {
    private let state = Atomic<UInt8>(0)  // 0 waiting, 1 started, 2 timed out

    func start() -> Bool { state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged }
    func timeOut() -> Bool { state.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged }
}

/// The pool and the background lane's pool run (and stop) together.
private struct PostgresPools: Service {
    let clients: [PostgresClient]

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for client in clients { group.addTask { await client.run() } }
        }
    }
}
