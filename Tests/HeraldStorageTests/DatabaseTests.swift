import Foundation
import HeraldCore
import HeraldSchema
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Synchronization
import Testing

@testable import HeraldAuth

struct Boom: Error {}

@Suite struct DatabaseTests {
    @Test(arguments: TestEngine.allCases)
    func migratesOnceAndIsIdempotent(engine: TestEngine) async throws {
        try await TestDatabase.with(engine, migrated: false) { database in
            let migrator = HeraldSchema.migrator
            let first = try await migrator.migrate(database, logger: TestDatabase.logger)
            let second = try await migrator.migrate(database, logger: TestDatabase.logger)
            let recorded = try await migrator.applied(database)
            // The 14 steps of the one list (two of them split), realtime/2, users/3, notifications/4,
            // notifications/5, notifications/6, notifications/7, ledger/2, dispatch/5, trips/3, transit/3, transit/4.
            #expect(first == migrator.ids && first.count == 27)
            #expect(second.isEmpty)
            #expect(recorded == Set(migrator.ids))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func concurrentMigratorsApplyEachMigrationExactlyOnce(engine: TestEngine) async throws {
        try await TestDatabase.with(engine, migrated: false) { database in
            let applied = try await withThrowingTaskGroup(of: [MigrationID].self) { group in
                for _ in 0..<4 {
                    group.addTask { try await HeraldSchema.migrator.migrate(database, logger: TestDatabase.logger) }
                }
                var all: [MigrationID] = []
                for try await versions in group { all += versions }
                return all
            }
            #expect(applied.sorted() == HeraldSchema.migrator.ids.sorted())
        }
    }

    @Test(arguments: TestEngine.allCases)
    func refusesASchemaNewerThanTheBinary(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let future = Migrator(
                sets: HeraldSchema.sets + [
                    MigrationSet(module: "future", migrations: [Migration(version: 1, name: "future", statements: ["CREATE TABLE future_things (id TEXT)"])])
                ])
            try await future.migrate(database, logger: TestDatabase.logger)
            await #expect(throws: MigrationError.self) { try await HeraldSchema.migrator.migrate(database, logger: TestDatabase.logger) }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func transactionsCommitOrRollBackAsAWhole(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = UserStore()
            try await database.transaction { db in
                try await store.ensure(db, id: "kept", role: "customer", now: 1)
                try await store.ensure(db, id: "kept-too", role: "customer", now: 1)
            }
            await #expect(throws: Boom.self) {
                try await database.transaction { db in
                    try await store.ensure(db, id: "lost", role: "customer", now: 1)
                    throw Boom()
                }
            }
            let ids = try await database.withConnection { db in
                try await db.raw("SELECT id FROM users ORDER BY id").all().map { try $0.decode(column: "id", as: String.self) }
            }
            #expect(ids == ["kept", "kept-too"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aFailedStatementRollsBackTheStatementsBeforeIt(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await UserStore().ensure(db, id: "first", role: "customer", now: 1)
                    try await db.raw("INSERT INTO no_such_table VALUES (1)").run()
                }
            }
            let user = try await database.withConnection { db in try await UserStore().find(db, id: "first") }
            #expect(user == nil)
            // The database is still usable after the failure.
            try await database.ping()
        }
    }

    /// The claim pattern later modules rely on: one conditional UPDATE … RETURNING, raced.
    @Test(arguments: TestEngine.allCases)
    func conditionalUpdateWithReturningHasExactlyOneWinner(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            _ = try await database.withConnection { db in try await UserStore().ensure(db, id: "job", role: "customer", now: 1) }
            let winners = try await withThrowingTaskGroup(of: String?.self) { group in
                for contender in 0..<50 {
                    group.addTask {
                        try await database.withConnection { db in
                            try await db.raw(
                                """
                                UPDATE users SET display_name = \(bind: "driver-\(contender)")
                                WHERE id = 'job' AND display_name IS NULL
                                RETURNING display_name
                                """
                            ).first()?.decode(column: "display_name", as: String.self)
                        }
                    }
                }
                var winners: [String] = []
                for try await winner in group { if let winner { winners.append(winner) } }
                return winners
            }
            #expect(winners.count == 1)
            let stored = try await database.withConnection { db in try await UserStore().find(db, id: "job") }
            #expect(stored?.displayName == winners.first)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func concurrentTransactionsDoNotInterleave(engine: TestEngine) async throws {
        // Each transaction reads a counter and writes it back plus one; lost updates would
        // show as a final value below the number of transactions.
        try await TestDatabase.with(engine) { database in
            _ = try await database.withConnection { db in try await UserStore().ensure(db, id: "counter", role: "0", now: 0) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await database.transaction { db in
                            if database.engine == .postgres {
                                try await db.raw("SELECT id FROM users WHERE id = 'counter' FOR UPDATE").run()
                            }
                            let value = try await db.raw("SELECT role FROM users WHERE id = 'counter'").first()!.decode(column: "role", as: String.self)
                            try await db.raw("UPDATE users SET role = \(bind: String(Int(value)! + 1)) WHERE id = 'counter'").run()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try await database.withConnection { db in try await UserStore().find(db, id: "counter") }
            #expect(final?.role == "20")
        }
    }
}
