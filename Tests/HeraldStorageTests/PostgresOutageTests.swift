import Foundation
import HeraldStorage
import HeraldTestSupport
import Logging
import SQLKit
import ServiceLifecycle
import Testing

/// A PostgreSQL server that is not there costs a bounded wait and a typed error, never a hung
/// request (`test_crash_postgres_restart.py` restarts a real server under load).
@Suite struct PostgresOutageTests {
    // Before the acquire timeout this never returned; the time limit turns a hang into a failure.
    @Test(.timeLimit(.minutes(10)))
    func noServerMeansDatabaseUnavailableWithinTheAcquireTimeout() async throws {
        // Port 1 on loopback: nothing listens (connection refused); the pool keeps retrying its
        // connection in the background.
        let port = 1
        guard case .postgres(let location) = try DatabaseURL(parsing: "postgres://postgres@127.0.0.1:\(port)/postgres") else {
            Issue.record("not a PostgreSQL URL")
            return
        }
        let database = PostgresDatabase(
            location: location,
            maxConnections: 2, acquireTimeout: .milliseconds(300), logger: Logger(label: "outage-test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.service?.run() }
            for _ in 0..<3 {
                // A 0.3 s wait each. No bound on the elapsed time is checked: on a loaded
                // two-core machine running the whole suite in parallel the timer's task can wait
                // tens of seconds for a thread. What is checked is that each call returns, with
                // the typed error (a hang is what the time limit reports).
                do {
                    _ = try await database.withConnection { db in try await db.raw("SELECT 1").all() }
                    Issue.record("a query succeeded without a server")
                } catch let error as DatabaseUnavailable {
                    #expect(error.reason == .noConnection)
                }
                await #expect(throws: DatabaseUnavailable.self) {
                    try await database.transaction { db in try await db.raw("SELECT 1").run() }
                }
            }
            group.cancelAll()
        }
    }

}
