import HeraldCore
import HeraldStorage
import Logging
import ServiceLifecycle

extension HeraldConfig {
    /// The database URL in force: the configured one, else the embedded file in the data dir.
    public func resolvedDatabaseURL() throws -> DatabaseURL {
        if let url = database.url, !url.isEmpty { return try DatabaseURL(parsing: url) }
        return .sqlite(path: dataDir.hasSuffix("/") ? "\(dataDir)herald.sqlite" : "\(dataDir)/herald.sqlite")
    }
}

/// Opens the configured database.
public enum DatabaseFactory {
    public static func open(_ url: DatabaseURL, config: HeraldConfig, logger: Logger) async throws -> any Database {
        switch url {
        case .sqlite(let path):
            return try await SQLiteDatabase.open(path: path, logger: logger)
        case .postgres(let location):
            return PostgresDatabase(
                location: location, maxConnections: config.database.maxConnections,
                backgroundConnections: config.database.backgroundConnections,
                acquireTimeout: .milliseconds(config.database.acquireTimeoutMs), logger: logger)
        }
    }

    /// Runs `body` with the database's service (the PostgreSQL pool) running, then closes it.
    /// For commands that use the database without serving (`herald migrate`).
    public static func withRunningDatabase<T: Sendable>(
        _ database: any Database, logger: Logger, _ body: @Sendable @escaping () async throws -> T
    ) async throws -> T {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await withService(database, body))
        } catch {
            outcome = .failure(error)
        }
        await database.close()
        return try outcome.get()
    }

    private static func withService<T: Sendable>(_ database: any Database, _ body: @Sendable @escaping () async throws -> T) async throws -> T {
        guard let service = database.service else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await service.run()
                return nil
            }
            group.addTask { try await body() }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let value = result { return value }
            }
            throw CancellationError()
        }
    }
}

/// Closes the database after every other service has stopped (services shut down in
/// reverse order, so this one, added first, goes last).
struct DatabaseCloser: Service {
    let database: any Database

    func run() async throws {
        try? await gracefulShutdown()
        await database.close()
    }
}
