import Foundation
import HTTPTypes
import HeraldCore
import HeraldIdempotency
import HeraldServerTestSupport
import HeraldStorage
import Hummingbird
import SQLKit
import Synchronization
import Testing

@testable import HeraldServer

/// A booking route whose first run "dies" right after its transaction commits: it never
/// returns (as a node killed at that moment), so nothing after the commit happens.
final class DyingBookings: Sendable {
    let database = Mutex<(any Database)?>(nil)
    let runs = Mutex(0)
    let released = Mutex<CheckedContinuation<Void, Never>?>(nil)

    func routes(answerWithWork: Bool) -> (RouterGroup<HeraldRequestContext>) -> Void {
        { api in
            api.post("/test/bookings") { request, context in
                let identity = try context.requireIdentity()
                let database = try #require(self.database.withLock { $0 })
                let run = self.runs.withLock { value -> Int in
                    value += 1
                    return value
                }
                let work: @Sendable (TransactionAnswer?) async throws -> String = { answer in
                    let id = "bk-\(run)"
                    try await database.transaction { db in
                        try await db.raw("INSERT INTO test_bookings (id, user_id) VALUES (\(bind: id), \(bind: identity.userID))").run()
                        if answerWithWork { try await answer?.record(id, in: db) }
                    }
                    if run == 1 { await withCheckedContinuation { continuation in self.released.withLock { $0 = continuation } } }
                    return id
                }
                let respond: @Sendable (String) throws -> Response = { id in
                    try Envelope.response(["booking": .string(id)], status: .created, context: context)
                }
                return try await IdempotentAnswer.answer(String.self, respond: respond, work: work)
            }
        }
    }

    func count(_ database: any Database) async throws -> Int {
        try await database.withConnection { db in
            try await db.raw("SELECT COUNT(*) AS n FROM test_bookings").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    func release() { released.withLock { $0 }?.resume() }
}

@Suite struct IdempotencyCrashTests {
    /// Books once through a node that "dies" right after the commit, lets its lock time out,
    /// retries with the same key, then lets the dead request go. Returns the retry's reply,
    /// the late first reply and how many bookings exist.
    func crashThenRetry(
        _ engine: TestEngine, answerWithWork: Bool
    ) async throws -> (retry: TestReply, late: TestReply, bookings: Int, runs: Int) {
        let clock = ManualClock(Date())
        let bookings = DyingBookings()
        return try await TestServer.run(engine, clock: clock, extraRoutes: bookings.routes(answerWithWork: answerWithWork)) { s in
            let database = s.runtime.database
            bookings.database.withLock { $0 = database }
            try await database.withConnection { db in
                try await db.raw("CREATE TABLE test_bookings (id TEXT PRIMARY KEY, user_id TEXT NOT NULL)").run()
            }
            let token = try await s.token("ann")
            let headers: HTTPFields = [idempotencyKey: "book-1"]
            let first = Task { try await s.request(.post, "/api/v1/test/bookings", token: token, headers: headers, json: ["seat": "4A"]) }
            try await waitUntil("the first booking committed") { try await bookings.count(database) == 1 }
            // The first node is gone for good; its lock times out.
            clock.advance(by: 61)
            let retry = try await s.request(.post, "/api/v1/test/bookings", token: token, headers: headers, json: ["seat": "4A"])
            let count = try await bookings.count(database)
            bookings.release()
            return (retry, try await first.value, count, bookings.runs.withLock { $0 })
        }
    }

    /// The node dies after the booking's transaction committed and before anything else ran.
    /// Once the key's lock times out, a retry (on any node) must replay the first answer, not
    /// book again: the answer was stored by the transaction that committed the booking.
    @Test(arguments: TestEngine.allCases)
    func aRetryAfterACrashPastTheCommitReplaysTheFirstAnswer(engine: TestEngine) async throws {
        let (retry, late, bookings, runs) = try await crashThenRetry(engine, answerWithWork: true)
        #expect(retry.status == 201)
        #expect(retry.data?["booking"] == "bk-1")
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(bookings == 1 && runs == 1)
        #expect(late.status == 201 && late.data?["booking"] == "bk-1")
    }

    /// The same crash with the answer stored after the commit (as before the fix, and as any
    /// route that does not answer with its work): the retry runs the work a second time.
    /// This is why every route whose re-run would repeat an effect answers with its work.
    @Test func withoutTheAnswerInTheTransactionTheRetryRunsAgain() async throws {
        let (retry, _, bookings, runs) = try await crashThenRetry(.sqlite, answerWithWork: false)
        #expect(retry.status == 201 && retry.data?["booking"] == "bk-2")
        #expect(bookings == 2 && runs == 2)
    }

    /// A retry that took the key over while the first run was still alive (slower than the
    /// lock timeout): whichever commits second finds the key no longer its own, rolls its work
    /// back and answers with the winner's stored answer.
    @Test(arguments: TestEngine.allCases)
    func aTakenOverRunRollsBackAndAnswersWithTheWinner(engine: TestEngine) async throws {
        let clock = ManualClock(Date())
        try await TestServer.run(engine, clock: clock) { s in
            let database = s.runtime.database
            let store = IdempotencyStore()
            let now = clock.now().epochMilliseconds
            let stale = try await database.withConnection { db in
                try await store.begin(
                    db, scope: "user:backend", key: "k", requestHash: "h", now: now, ttlMilliseconds: 86_400_000, lockTimeoutMilliseconds: 60_000)
            }
            #expect(stale == IdempotencyStore.BeginResult.acquired(lockedAt: now))
            let newer = try await database.withConnection { db in
                try await store.begin(
                    db, scope: "user:backend", key: "k", requestHash: "h", now: now + 60_000, ttlMilliseconds: 86_400_000, lockTimeoutMilliseconds: 60_000)
            }
            #expect(newer == IdempotencyStore.BeginResult.acquired(lockedAt: now + 60_000))
            try await database.withConnection { db in try await db.raw("CREATE TABLE stale_work (id TEXT)").run() }
            // The stale owner's work and answer in one transaction: refused, nothing kept.
            let claim = IdempotencyClaim(scope: "user:backend", key: "k", lockedAt: now)
            await #expect(throws: IdempotencyKeyTakenOver.self) {
                _ = try await IdempotencyClaim.$current.withValue(claim) {
                    try await IdempotentAnswer.answer(String.self, respond: { _ in Response(status: .created) }) { answer in
                        try await database.transaction { db in
                            try await db.raw("INSERT INTO stale_work (id) VALUES ('w')").run()
                            try await answer?.record("done", in: db)
                            return "done"
                        }
                    }
                }
            }
            let kept = try await database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM stale_work").first()?.decode(column: "n", as: Int.self)
            }
            #expect(kept == 0)
        }
    }
}
