import Foundation
import HeraldCore
import Logging
import NIOCore
import SQLKit
import SQLiteKit
import SQLiteNIO
import ServiceLifecycle

/// The embedded engine: one file, no server, for `herald serve` out of the box and for
/// single-node deployments.
///
/// Why one connection behind a gate: SQLite allows one writer at a time anyway, and a
/// transaction lives on its connection, so every scope (`withConnection` or `transaction`)
/// takes the gate and runs alone. WAL mode keeps readers of other processes
/// (`herald migrate`, backups) unblocked. Scopes must not nest: a store method that needs
/// the database takes the executor it is given instead of opening a new scope.
public final class SQLiteDatabase: Database {
    public let engine = DatabaseEngine.sqlite
    public let path: String
    private let connection: SQLiteConnection
    private let gate = AsyncSerialGate()
    private let logger: Logger

    public static func open(path: String, logger: Logger) async throws -> SQLiteDatabase {
        let storage: SQLiteConnection.Storage
        if path == ":memory:" {
            storage = .memory
        } else {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            storage = .file(path: path)
        }
        let connection = try await SQLiteConnection.open(storage: storage, logger: logger).get()
        let database = SQLiteDatabase(path: path, connection: connection, logger: logger)
        try await database.withConnection { db in
            // WAL: readers never block the writer; NORMAL sync is durable across process crashes.
            try await db.raw("PRAGMA journal_mode = WAL").run()
            try await db.raw("PRAGMA synchronous = NORMAL").run()
            try await db.raw("PRAGMA foreign_keys = ON").run()
            try await db.raw("PRAGMA busy_timeout = 5000").run()
        }
        return database
    }

    private init(path: String, connection: SQLiteConnection, logger: Logger) {
        self.path = path
        self.connection = connection
        self.logger = logger
    }

    private var executor: any SQLDatabase { connection.sql(queryLogLevel: .trace) }

    public func withConnection<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let executor = self.executor
        return try await gate.run { try await body(executor) }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let executor = self.executor
        return try await gate.run {
            // IMMEDIATE takes the write lock at BEGIN, so another process cannot make this
            // transaction fail half-way with SQLITE_BUSY.
            try await executor.raw("BEGIN IMMEDIATE").run()
            do {
                let result = try await body(executor)
                try await executor.raw("COMMIT").run()
                return result
            } catch {
                do {
                    // Awaited at once, but in its own task: when the caller was cancelled (a
                    // shutdown, a deadline) the rollback must still run, or the one shared
                    // connection would stay inside this transaction for everyone after.
                    try await Task { try await executor.raw("ROLLBACK").run() }.value
                } catch let rollbackError {
                    logger.error("rollback failed", metadata: ["error": "\(String(reflecting: rollbackError))"])
                }
                throw error
            }
        }
    }

    public var service: (any Service)? { nil }

    public func close() async {
        do {
            try await connection.close().get()
        } catch {
            logger.warning("closing SQLite failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
