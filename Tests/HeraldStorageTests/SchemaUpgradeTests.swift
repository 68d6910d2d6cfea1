import Foundation
import HeraldCore
import HeraldSchema
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

/// A database made by Herald before each module took its own tables (one numbered list in
/// `herald_schema_migrations`), with two rows in each of its 52 tables, upgraded by the
/// current migrator: nothing is re-applied, lost or changed, and the result has the schema a
/// new database gets. The fixtures are dumps made by `scripts/make-schema-fixture` with the
/// `herald` binary of that commit.
@Suite(.timeLimit(.minutes(10))) struct SchemaUpgradeTests {
    static func fixture(_ engine: TestEngine) -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent("Tests/Fixtures/schema-upgrade/before-module-migrations.\(engine == .sqlite ? "sqlite" : "postgres").sql").path
    }

    /// Loads the dump with the engine's own tools (Python's sqlite3 module, psql). psql is
    /// tried again while the server cannot take one more connection (the other suites' pools,
    /// or a backend slow to start on a loaded machine); any other failure fails at once.
    static func load(_ engine: TestEngine, into url: String) async throws {
        let deadline = ContinuousClock.now + Patience.limit
        while true {
            let (status, errors) = try await run(engine, into: url)
            if status == 0 { return }
            let busy = ["too many clients", "remaining connection slots", "the database system is starting up", "timeout expired", "could not connect"]
            guard engine == .postgres, busy.contains(where: { errors.contains($0) }), ContinuousClock.now < deadline else {
                Issue.record("loading \(fixture(engine)) failed (exit \(status)): \(errors)")
                throw LoadFailed(status: status)
            }
            try await CancellableSleep.sleep(for: .milliseconds(500))
        }
    }

    struct LoadFailed: Error {
        let status: Int32
    }

    /// Runs the loader on a Dispatch thread, never on the cooperative pool: `waitUntilExit()`
    /// blocks its thread, and the suite's two cooperative threads are every test's.
    static func run(_ engine: TestEngine, into url: String) async throws -> (status: Int32, errors: String) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(engine, into: url) })
            }
        }
    }

    static func runBlocking(_ engine: TestEngine, into url: String) throws -> (status: Int32, errors: String) {
        let process = Process()
        switch engine {
        case .sqlite:
            let path = String(url.dropFirst("sqlite:".count))
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())", path, fixture(engine),
            ]
        case .postgres:
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", fixture(engine)]
        }
        // Errors go to a file (a pipe the child fills while nobody reads would wedge it).
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-schema-load-\(UUID().uuidString).err")
        try Data().write(to: errorFile)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let stderr = try FileHandle(forWritingTo: errorFile)
        defer { try? stderr.close() }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: try Data(contentsOf: errorFile), as: UTF8.self))
    }

    static let tracking: Set<String> = ["herald_schema_migrations", "herald_migrations", "sqlite_sequence"]

    /// Every table's columns (name and declared type, in order) and indexes.
    static func schema(_ database: any Database) async throws -> [String: [String]] {
        try await database.withConnection { db in
            var schema: [String: [String]] = [:]
            switch database.engine {
            case .sqlite:
                for table in try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table'").all().map({
                    try $0.decode(column: "name", as: String.self)
                }) {
                    let columns = try await db.raw(SQLQueryString("PRAGMA table_info(\(unsafeRaw: table))")).all()
                    schema[table] = try columns.map { "\(try $0.decode(column: "name", as: String.self)) \(try $0.decode(column: "type", as: String.self))" }
                }
                for index in try await db.raw("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() {
                    schema["index " + (try index.decode(column: "sql", as: String.self))] = [try index.decode(column: "tbl_name", as: String.self)]
                }
            case .postgres:
                let columns = try await db.raw(
                    """
                    SELECT table_name, column_name, data_type, is_nullable, COALESCE(column_default, '') AS column_default FROM information_schema.columns
                    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
                    """
                ).all()
                for column in columns {
                    let line = try ["column_name", "data_type", "is_nullable", "column_default"].map { try column.decode(column: $0, as: String.self) }.joined(
                        separator: " ")
                    schema[try column.decode(column: "table_name", as: String.self), default: []].append(line)
                }
                for index in try await db.raw("SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema()").all() {
                    schema["index " + (try index.decode(column: "indexdef", as: String.self))] = [try index.decode(column: "tablename", as: String.self)]
                }
            }
            return schema
        }
    }

    /// Every row of every table but the migration records, each as its columns cast to text.
    static func rows(_ database: any Database, _ schema: [String: [String]]) async throws -> [String: [String]] {
        try await database.withConnection { db in
            var rows: [String: [String]] = [:]
            for (table, columns) in schema where !table.hasPrefix("index ") && !tracking.contains(table) {
                let names = columns.map { String($0.split(separator: " ")[0]) }
                let cast = names.map { database.engine == .sqlite ? "COALESCE(CAST(\($0) AS TEXT), 'NULL')" : "COALESCE(\($0)::text, 'NULL')" }
                let query = "SELECT " + cast.joined(separator: " || '|' || ") + " AS line FROM \(table)"
                rows[table] = try await db.raw(SQLQueryString(query)).all().map { try $0.decode(column: "line", as: String.self) }.sorted()
            }
            return rows
        }
    }

    /// Migrations added after the fixtures were made (a database from then gets exactly these).
    static let sinceFixtures = [
        MigrationID(module: "users", version: 3), MigrationID(module: "realtime", version: 2), MigrationID(module: "notifications", version: 4),
        MigrationID(module: "notifications", version: 5), MigrationID(module: "notifications", version: 6),
        MigrationID(module: "notifications", version: 7), MigrationID(module: "ledger", version: 2),
        MigrationID(module: "dispatch", version: 5), MigrationID(module: "trips", version: 3), MigrationID(module: "transit", version: 3),
        MigrationID(module: "transit", version: 4),
    ]

    @Test(arguments: TestEngine.allCases)
    func aDatabaseFromBeforeTheSplitUpgradesWithoutLoss(engine: TestEngine) async throws {
        do {
            try await upgrade(engine)
        } catch {
            Issue.record("upgrading failed: \(String(reflecting: error))")
        }
    }

    func upgrade(_ engine: TestEngine) async throws {
        let fresh = try await TestDatabase.with(engine) { database in try await Self.schema(database) }
        try await TestDatabase.with(engine, migrated: false, prepare: { try await Self.load(engine, into: $0) }) { database in
            let before = try await Self.schema(database)
            let rows = try await Self.rows(database, before)
            #expect(rows.count == 52 && rows.values.allSatisfy { $0.count == 2 })

            let migrator = HeraldSchema.migrator
            let applied = try await migrator.migrate(database, logger: TestDatabase.logger)
            #expect(applied == Self.sinceFixtures, "applied \(applied)")
            #expect(try await migrator.applied(database) == Set(migrator.ids))
            #expect(try await Self.rows(database, before) == rows)
            // The same tables, columns and indexes as a database the current migrator made.
            var after = try await Self.schema(database)
            var expected = fresh
            for table in Self.tracking {
                after[table] = nil
                expected[table] = nil
            }
            #expect(after.filter { !$0.key.contains("herald_") } == expected.filter { !$0.key.contains("herald_") })
            // The old list is sealed: an older Herald refuses this database instead of mis-reading it.
            let sealed = try await database.withConnection { db in
                try await db.raw("SELECT MAX(version) AS v FROM herald_schema_migrations").first()?.decode(column: "v", as: Int.self)
            }
            #expect(sealed == 1_000_000)
            #expect(try await migrator.migrate(database, logger: TestDatabase.logger).isEmpty)
        }
    }

    /// A database a step behind (made before `scheduled payment holds`, legacy version 14)
    /// gets exactly that step on upgrade, under its module's name (and what came after the fixtures).
    @Test(arguments: TestEngine.allCases)
    func aDatabaseAStepBehindGetsOnlyTheMissingStep(engine: TestEngine) async throws {
        try await TestDatabase.with(engine, migrated: false, prepare: { try await Self.load(engine, into: $0) }) { database in
            try await database.withConnection { db in
                try await db.raw("DELETE FROM herald_schema_migrations WHERE version = 14").run()
                try await db.raw("ALTER TABLE payment_holds DROP COLUMN payment_method").run()
                try await db.raw("ALTER TABLE payment_holds DROP COLUMN customer_id").run()
            }
            let applied = try await HeraldSchema.migrator.migrate(database, logger: TestDatabase.logger)
            #expect(Set(applied) == Set([MigrationID(module: "dispatch", version: 4)] + Self.sinceFixtures))
            let holds = try await database.withConnection { db in
                try await db.raw("SELECT job_id, payment_method, customer_id FROM payment_holds").all()
            }
            #expect(holds.count == 2)
        }
    }
}
