import Foundation
import HeraldCore
import HeraldSchema
import HeraldStorage
import Logging
import NIOCore
import PostgresNIO

/// The engines every store and server test runs on.
public enum TestEngine: String, CaseIterable, Sendable {
    case sqlite
    case postgres
}

public enum TestEnvironmentError: Error, CustomStringConvertible {
    case postgresNotConfigured
    public var description: String {
        "HERALD_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts a throwaway PostgreSQL cluster"
    }
}

/// A fresh, empty database for one test: a new SQLite file in a temp dir, or a new database
/// on the test PostgreSQL cluster (created from `HERALD_TEST_POSTGRES_URL`).
public enum TestDatabase {
    public static let logger: Logger = {
        var logger = Logger(label: "herald-test")
        logger.logLevel = ProcessInfo.processInfo.environment["HERALD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }()

    public static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A URL for a brand-new database on `engine`.
    public static func makeURL(_ engine: TestEngine) async throws -> String {
        switch engine {
        case .sqlite:
            return "sqlite:\(try temporaryDirectory())/herald.sqlite"
        case .postgres:
            guard let admin = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"],
                case .postgres(let location) = try DatabaseURL(parsing: admin)
            else { throw TestEnvironmentError.postgresNotConfigured }
            let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try await createDatabase(name, at: location)
            return "postgres://\(location.username)@\(location.host):\(location.port)/\(name)"
        }
    }

    /// Creates database `name` on the test cluster. Tried again while the cluster cannot take
    /// one more connection (every case's pool shares it) or a connection is slow to start on a
    /// loaded machine, for up to `Patience.limit`; a refusal of the statement itself is not retried.
    static func createDatabase(_ name: String, at location: DatabaseURL.PostgresLocation) async throws {
        let deadline = ContinuousClock.now + Patience.limit
        var attempt = 0
        while true {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    configuration: .init(
                        host: location.host, port: location.port, username: location.username,
                        password: location.password, database: location.database, tls: .disable),
                    id: attempt, logger: logger)
            } catch {
                // "too many clients" (53300), "starting up" (57P03), a refused or timed-out connect.
                guard ContinuousClock.now < deadline else { throw error }
                try await CancellableSleep.sleep(for: .milliseconds(min(2_000, 50 * attempt)))
                continue
            }
            do {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
                try await connection.close()
                return
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    /// Opens a fresh database, runs `body` with the database's service running, and closes it.
    /// `prepare` gets the new database's URL before it is opened (to load a fixture into it).
    public static func with<T: Sendable>(
        _ engine: TestEngine, migrated: Bool = true, prepare: (String) async throws -> Void = { _ in },
        _ body: @Sendable @escaping (any Database) async throws -> T
    ) async throws -> T {
        let text = try await makeURL(engine)
        try await prepare(text)
        let url = try DatabaseURL(parsing: text)
        let database: any Database
        switch url {
        case .sqlite(let path): database = try await SQLiteDatabase.open(path: path, logger: logger)
        case .postgres(let location):
            database = PostgresDatabase(
                // A small pool (every case's pool shares the test cluster) and a long wait for it:
                // a loaded machine waits instead of failing with DatabaseUnavailable(noConnection).
                location: location, maxConnections: 10, acquireTimeout: Patience.limit, logger: logger)
        }
        return try await database.running {
            if migrated { try await HeraldSchema.migrator.migrate(database, logger: logger) }
            return try await body(database)
        }
    }
}
