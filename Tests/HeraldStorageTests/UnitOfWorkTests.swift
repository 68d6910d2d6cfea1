import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldAuth

/// Effects registered in a unit of work run after its commit, in order, and see what it
/// committed; a unit that throws runs none of them.
@Suite struct UnitOfWorkTests {
    @Test(arguments: TestEngine.allCases)
    func effectsFollowTheCommitAndNeverARollback(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let seen = Mutex<[String]>([])
            let result = try await database.unitOfWork { work -> Int in
                try await UserStore().ensure(work.db, id: "committed", role: "customer", now: 1)
                work.afterCommit {
                    // Runs outside the transaction: another connection sees the row.
                    let user = try? await database.withConnection { db in try await UserStore().find(db, id: "committed") }
                    seen.withLock { $0.append("first:\(user?.id ?? "missing")") }
                }
                work.afterCommit { seen.withLock { $0.append("second") } }
                seen.withLock { $0.append("body") }
                return 7
            }
            #expect(result == 7)
            #expect(seen.withLock { $0 } == ["body", "first:committed", "second"])

            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await database.unitOfWork { work in
                    try await UserStore().ensure(work.db, id: "rolled-back", role: "customer", now: 1)
                    work.afterCommit { seen.withLock { $0.append("after a rollback") } }
                    throw Refused()
                }
            }
            #expect(seen.withLock { $0 }.count == 3)
            #expect(try await database.withConnection { db in try await UserStore().find(db, id: "rolled-back") } == nil)
        }
    }
}
