import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import ServiceLifecycle

/// The shared engine for many nodes: a pooled `PostgresClient` whose `run()` is a Service in
/// the application's ServiceGroup (no connection is leased until it runs).
public final class PostgresDatabase: Database {
    public let engine = DatabaseEngine.postgres
    public let client: PostgresClient
    private let logger: Logger

    public init(location: DatabaseURL.PostgresLocation, maxConnections: Int, logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username,
            password: location.password, database: location.database,
            tls: location.requireTLS ? .require(.makeClientConfiguration()) : .disable
        )
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = .seconds(5)
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    public func withConnection<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await client.withConnection { connection in
            try await body(connection.sql(queryLogLevel: .trace, logger: logger))
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await body(connection.sql(queryLogLevel: .trace, logger: logger))
            }
        } catch let error as PostgresTransactionError {
            // Callers see the error their closure threw (a domain error, a conflict), as on SQLite.
            if let closureError = error.closureError, error.rollbackError == nil { throw closureError }
            throw error
        }
    }

    public var service: (any Service)? { client }

    public func close() async {}
}
