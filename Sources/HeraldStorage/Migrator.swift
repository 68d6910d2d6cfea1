import Foundation
import HeraldCore
import Logging
import SQLKit

/// Applies pending migrations, module by module in the order given, each step in its own
/// transaction, and records them in `herald_migrations` (module, version).
///
/// Why a lock on PostgreSQL: several nodes may start at once; an advisory lock inside each
/// migration's transaction makes exactly one of them apply it while the others wait and
/// then find it done. On SQLite, `BEGIN IMMEDIATE` serialises the same way.
///
/// A database migrated before the modules took their own tables recorded one numbered list
/// in `herald_schema_migrations`; the first run adopts it (every step whose `legacyVersion`
/// is recorded there counts as applied) and seals that table with a version no older Herald
/// knows, so an older binary refuses the database instead of mis-reading it.
public struct Migrator: Sendable {
    public let sets: [MigrationSet]

    public init(sets: [MigrationSet]) {
        precondition(Set(sets.map(\.module)).count == sets.count, "modules must be listed once")
        self.sets = sets
    }

    static let lockKey: Int64 = 0x4845_5241_4C44  // "HERALD"
    static let legacyTable = "herald_schema_migrations"
    /// Recorded in the legacy table once adopted (older binaries know versions up to 14).
    static let legacySeal = 1_000_000

    public var ids: [MigrationID] { sets.flatMap { set in set.migrations.map { MigrationID(module: set.module, version: $0.version) } } }

    /// Like `migrate(_:logger:)`, but gives up with `MigrationError.databaseUnreachable` when
    /// the database does not answer within `deadline` (a wrong host or port fails in seconds,
    /// not after the pool's own retries).
    @discardableResult
    public func migrate(_ database: any Database, logger: Logger, deadline: Duration) async throws -> [MigrationID] {
        do {
            try await withDeadline(deadline) { try await database.ping() }
        } catch is DeadlineExceeded {
            throw MigrationError.databaseUnreachable(seconds: Int(deadline.components.seconds))
        }
        return try await migrate(database, logger: logger)
    }

    /// Returns the steps applied by this call (empty when the schema was current).
    @discardableResult
    public func migrate(_ database: any Database, logger: Logger) async throws -> [MigrationID] {
        let engine = database.engine
        let adopted = try await database.transaction { db -> Int in
            // Concurrent CREATE TABLE IF NOT EXISTS can collide on PostgreSQL: take the lock first.
            if engine == .postgres {
                try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run()
            }
            try await db.raw(
                """
                CREATE TABLE IF NOT EXISTS herald_migrations (
                    module TEXT NOT NULL,
                    version BIGINT NOT NULL,
                    name TEXT NOT NULL,
                    applied_at BIGINT NOT NULL,
                    PRIMARY KEY (module, version)
                )
                """
            ).run()
            return try await adoptLegacy(db, engine: engine)
        }
        if adopted > 0 {
            logger.info("adopted the migrations recorded before each module took its own tables", metadata: ["steps": "\(adopted)"])
        }
        let existing = try await applied(database)
        if let unknown = existing.subtracting(ids).max() {
            throw MigrationError.schemaNewerThanBinary(migration: unknown.description)
        }
        var applied: [MigrationID] = []
        for set in sets {
            for migration in set.migrations {
                let id = MigrationID(module: set.module, version: migration.version)
                if existing.contains(id) { continue }
                let didApply = try await database.transaction { db in
                    if engine == .postgres {
                        try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.lockKey))").run()
                    }
                    let done = try await db.raw(
                        "SELECT version FROM herald_migrations WHERE module = \(bind: id.module) AND version = \(bind: id.version)"
                    ).first()
                    if done != nil { return false }
                    for statement in migration.sql(for: engine) {
                        try await db.raw(SQLQueryString(statement)).run()
                    }
                    try await Self.record(db, id, name: migration.name, at: Date().epochMilliseconds)
                    return true
                }
                if didApply {
                    logger.info("applied migration", metadata: ["module": "\(id.module)", "version": "\(id.version)", "name": "\(migration.name)"])
                    applied.append(id)
                }
            }
        }
        return applied
    }

    public func applied(_ database: any Database) async throws -> Set<MigrationID> {
        try await database.withConnection { db in
            let rows = try await db.raw("SELECT module, version FROM herald_migrations").all()
            return Set(
                try rows.map { MigrationID(module: try $0.decode(column: "module", as: String.self), version: try $0.decode(column: "version", as: Int.self)) })
        }
    }

    private static func record(_ db: any SQLDatabase, _ id: MigrationID, name: String, at time: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO herald_migrations (module, version, name, applied_at)
            VALUES (\(bind: id.module), \(bind: id.version), \(bind: name), \(bind: time))
            ON CONFLICT (module, version) DO NOTHING
            """
        ).run()
    }

    /// Records as applied every step the legacy list had applied, once; answers how many.
    private func adoptLegacy(_ db: any SQLDatabase, engine: DatabaseEngine) async throws -> Int {
        let present: Bool =
            switch engine {
            case .sqlite:
                try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name = \(bind: Self.legacyTable)").first() != nil
            case .postgres:
                try await db.raw(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(bind: Self.legacyTable)"
                ).first() != nil
            }
        guard present else { return 0 }
        let rows = try await db.raw("SELECT version, applied_at FROM herald_schema_migrations").all()
        var legacy: [Int: Int64] = [:]
        for row in rows { legacy[try row.decode(column: "version", as: Int.self)] = try row.decode(column: "applied_at", as: Int64.self) }
        if legacy[Self.legacySeal] != nil { return 0 }
        let known = Set(sets.flatMap { $0.migrations.compactMap(\.legacyVersion) })
        if let unknown = Set(legacy.keys).subtracting(known).max() {
            throw MigrationError.schemaNewerThanBinary(migration: "\(Self.legacyTable)/\(unknown)")
        }
        var adopted = 0
        for set in sets {
            for migration in set.migrations {
                guard let version = migration.legacyVersion, let at = legacy[version] else { continue }
                try await Self.record(db, MigrationID(module: set.module, version: migration.version), name: migration.name, at: at)
                adopted += 1
            }
        }
        try await db.raw(
            """
            INSERT INTO herald_schema_migrations (version, name, applied_at)
            VALUES (\(bind: Self.legacySeal), 'superseded by herald_migrations', \(bind: Date().epochMilliseconds))
            """
        ).run()
        return adopted
    }
}

public enum MigrationError: Error, CustomStringConvertible {
    case schemaNewerThanBinary(migration: String)
    case databaseUnreachable(seconds: Int)

    public var description: String {
        switch self {
        case .schemaNewerThanBinary(let migration):
            "the database has migration \(migration), which this Herald binary does not know: run a newer Herald"
        case .databaseUnreachable(let seconds):
            "the database did not answer within \(seconds) s: check the database URL and that the server is up"
        }
    }
}
