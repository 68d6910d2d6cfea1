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
