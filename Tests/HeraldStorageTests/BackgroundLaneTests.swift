import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Logging
import SQLKit
import Testing

/// Work no request waits on (push delivery) keeps its own connections: a pool taken by
/// requests makes them wait, not it.
@Suite struct BackgroundLaneTests {
    @Test(.timeLimit(.minutes(2)))
    func aPoolTakenByRequestsLeavesTheBackgroundLaneFree() async throws {
        guard case .postgres(let location) = try DatabaseURL(parsing: try await TestDatabase.makeURL(.postgres)) else {
            Issue.record("not a PostgreSQL URL")
            return
        }
        let database = PostgresDatabase(
            location: location, maxConnections: 2, backgroundConnections: 1, acquireTimeout: .seconds(2), logger: TestDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.service?.run() }
            // Every connection opened first: with the whole suite running, opening one can take
            // longer than the acquire timeout, and the test is about leasing, not connecting.
            try await Self.untilConnected { try await database.background.withConnection { db in try await db.raw("SELECT 1").run() } }
            try await Self.untilConnected {
                try await withThrowingTaskGroup(of: Void.self) { both in
                    for _ in 0..<2 { both.addTask { try await database.withConnection { db in try await db.raw("SELECT pg_sleep(0.2)").run() } } }
                    try await both.waitForAll()
                }
            }
            // Both pooled connections held by long statements (requests in flight).
            let (holding, held) = AsyncStream.makeStream(of: Void.self)
            for _ in 0..<2 {
                group.addTask {
                    try await database.withConnection { db in
                        held.yield()
                        try await db.raw("SELECT pg_sleep(10)").run()
                    }
                }
            }
            var waiting = holding.makeAsyncIterator()
            for _ in 0..<2 { await waiting.next() }

            // A third request waits for the pool and gives up after the acquire timeout...
            await #expect(throws: DatabaseUnavailable.self) {
                try await database.withConnection { db in try await db.raw("SELECT 1").run() }
            }
            // ...while the background lane answers at once, in and out of transactions.
            let answer = try await database.background.withConnection { db in
                try await db.raw("SELECT 41 + 1 AS answer").first()?.decode(column: "answer", as: Int.self)
            }
            #expect(answer == 42)
            let inTransaction = try await database.background.transaction { db in
                try await db.raw("SELECT 7 AS seven").first()?.decode(column: "seven", as: Int.self)
            }
            #expect(inTransaction == 7)
            // The two long statements end normally: the lane took nothing from them.
            try await group.next()
            try await group.next()
            group.cancelAll()
        }
    }

    private static func untilConnected(_ attempt: @Sendable () async throws -> Void) async throws {
        while true {
            do {
                return try await attempt()
            } catch is DatabaseUnavailable {
                try await CancellableSleep.sleep(for: .milliseconds(100))
            }
        }
    }

    @Test func withoutALaneTheBackgroundIsThePool() async throws {
        guard case .postgres(let location) = try DatabaseURL(parsing: "postgres://postgres@127.0.0.1:1/postgres") else {
            Issue.record("not a PostgreSQL URL")
            return
        }
        let shared = PostgresDatabase(location: location, maxConnections: 2, logger: TestDatabase.logger)
        #expect(shared.background as AnyObject === shared)
        let laned = PostgresDatabase(location: location, maxConnections: 2, backgroundConnections: 1, logger: TestDatabase.logger)
        #expect(laned.background as AnyObject !== laned)
        try await TestDatabase.with(.sqlite, migrated: false) { database in
            #expect(database.background as AnyObject === database as AnyObject)
        }
    }
}
