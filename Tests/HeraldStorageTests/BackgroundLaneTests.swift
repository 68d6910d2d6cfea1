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
    @Test(.timeLimit(.minutes(10)))
    func aPoolTakenByRequestsLeavesTheBackgroundLaneFree() async throws {
        guard case .postgres(let location) = try DatabaseURL(parsing: try await TestDatabase.makeURL(.postgres)) else {
            Issue.record("not a PostgreSQL URL")
            return
        }
        let database = PostgresDatabase(
            location: location, maxConnections: 2, backgroundConnections: 1, acquireTimeout: .seconds(2), logger: TestDatabase.logger)
        // A pool of its own holds an advisory lock that the "requests" below wait for, so they
        // hold their connections until the test lets them go (not for a fixed time a loaded
        // machine could outlast).
        let locker = PostgresDatabase(location: location, maxConnections: 1, acquireTimeout: Patience.limit, logger: TestDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.service?.run() }
            group.addTask { try await locker.service?.run() }
            // Every connection opened first: with the whole suite running, opening one can take
            // longer than the acquire timeout, and the test is about leasing, not connecting.
            try await Self.untilConnected { try await database.background.withConnection { db in try await db.raw("SELECT 1").run() } }
            try await Self.untilConnected {
                try await withThrowingTaskGroup(of: Void.self) { both in
                    for _ in 0..<2 { both.addTask { try await database.withConnection { db in try await db.raw("SELECT pg_sleep(0.2)").run() } } }
                    try await both.waitForAll()
                }
            }
            let (locked, lockTaken) = AsyncStream.makeStream(of: Void.self)
            let (unlock, release) = AsyncStream.makeStream(of: Void.self)
            group.addTask {
                try await locker.withConnection { db in
                    try await db.raw("SELECT pg_advisory_lock(4242)").run()
                    lockTaken.yield()
                    for await _ in unlock { break }
                    try await db.raw("SELECT pg_advisory_unlock(4242)").run()
                }
            }
            for await _ in locked { break }

            // Both pooled connections held by statements that wait for the lock (requests in flight).
            let (holding, held) = AsyncStream.makeStream(of: Void.self)
            for _ in 0..<2 {
                group.addTask {
                    try await Self.untilConnected {
                        try await database.withConnection { db in
                            held.yield()
                            try await db.raw("SELECT pg_advisory_xact_lock_shared(4242)").run()
                        }
                    }
                }
            }
            var waiting = holding.makeAsyncIterator()
            for _ in 0..<2 { await waiting.next() }

            // A third request waits for the pool and gives up after the acquire timeout (the
            // two held connections are not let go until the test says so)...
            await #expect(throws: DatabaseUnavailable.self) {
                try await database.withConnection { db in try await db.raw("SELECT 1").run() }
            }
            // ...while the background lane answers, in and out of transactions. (Tried again if
            // its own 2 s lease loses a race with a starved timer: the pool stays held meanwhile.)
            let answer = try await Self.untilConnected {
                try await database.background.withConnection { db in
                    try await db.raw("SELECT 41 + 1 AS answer").first()?.decode(column: "answer", as: Int.self)
                }
            }
            #expect(answer == 42)
            let inTransaction = try await Self.untilConnected {
                try await database.background.transaction { db in
                    try await db.raw("SELECT 7 AS seven").first()?.decode(column: "seven", as: Int.self)
                }
            }
            #expect(inTransaction == 7)
            // Let the lock go: the two held statements and the locker end normally (the lane
            // took nothing from them). The pools' services run until cancelled.
            release.yield()
            release.finish()
            for _ in 0..<3 { try await group.next() }
            group.cancelAll()
        }
    }

    /// Runs `attempt` until it gets a connection (a pool's 2 s acquire timeout is shorter than
    /// a loaded machine's delays).
    @discardableResult
    private static func untilConnected<T: Sendable>(_ attempt: @Sendable () async throws -> T) async throws -> T {
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
