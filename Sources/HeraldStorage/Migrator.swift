import Foundation
import HeraldCore
import Logging
import SQLKit

/// Applies pending migrations in order, each in its own transaction, and records them.
///
/// Why a lock on PostgreSQL: several nodes may start at once; an advisory lock inside each
/// migration's transaction makes exactly one of them apply it while the others wait and
/// then find it done. On SQLite, `BEGIN IMMEDIATE` serialises the same way.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration] = HeraldMigrations.all) {
        precondition(Set(migrations.map(\.version)).count == migrations.count, "migration versions must be unique")
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    static let lockKey: Int64 = 0x4845_5241_4C44  // "HERALD"

    /// Like `migrate(_:logger:)`, but gives up with `MigrationError.databaseUnreachable` when
    /// the database does not answer within `deadline` (a wrong host or port fails in seconds,
    /// not after the pool's own retries).
    @discardableResult
    public func migrate(_ database: any Database, logger: Logger, deadline: Duration) async throws -> [Int] {
        do {
            try await withDeadline(deadline) { try await database.ping() }
        } catch is DeadlineExceeded {
            throw MigrationError.databaseUnreachable(seconds: Int(deadline.components.seconds))
        }
        return try await migrate(database, logger: logger)
    }

    /// Returns the versions applied by this call (empty when the schema was current).
    @discardableResult
    public func migrate(_ database: any Database, logger: Logger) async throws -> [Int] {
        let engine = database.engine
        try await database.transaction { db in
            // Concurrent CREATE TABLE IF NOT EXISTS can collide on PostgreSQL: take the lock first.
            if engine == .postgres {
                try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run()
            }
            try await db.raw(
                """
                CREATE TABLE IF NOT EXISTS herald_schema_migrations (
                    version BIGINT PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at BIGINT NOT NULL
                )
                """
            ).run()
        }
        let known = Set(migrations.map(\.version))
        let existing = try await appliedVersions(database)
        if let unknown = existing.subtracting(known).max() {
            throw MigrationError.schemaNewerThanBinary(version: unknown)
        }
        var applied: [Int] = []
        for migration in migrations where !existing.contains(migration.version) {
            let didApply = try await database.transaction { db in
                if engine == .postgres {
                    try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run()
                }
                let done = try await db.raw("SELECT version FROM herald_schema_migrations WHERE version = \(bind: migration.version)").first()
                if done != nil { return false }
                for statement in migration.sql(for: engine) {
                    try await db.raw(SQLQueryString(statement)).run()
                }
                let now = Date().epochMilliseconds
                try await db.raw(
                    "INSERT INTO herald_schema_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: now))"
                ).run()
                return true
            }
            if didApply {
                logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                applied.append(migration.version)
            }
        }
        return applied
    }

    public func appliedVersions(_ database: any Database) async throws -> Set<Int> {
        try await database.withConnection { db in
            let rows = try await db.raw("SELECT version FROM herald_schema_migrations").all()
            return Set(try rows.map { try $0.decode(column: "version", as: Int.self) })
        }
    }
}

public enum MigrationError: Error, CustomStringConvertible {
    case schemaNewerThanBinary(version: Int)
    case databaseUnreachable(seconds: Int)

    public var description: String {
        switch self {
        case .schemaNewerThanBinary(let version):
            "the database has migration \(version), which this Herald binary does not know: run a newer Herald"
        case .databaseUnreachable(let seconds):
            "the database did not answer within \(seconds) s: check the database URL and that the server is up"
        }
    }
}
