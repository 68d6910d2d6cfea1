import Foundation
import HeraldIdempotency
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldServer

@Suite struct IdempotencyStoreTests {
    let store = IdempotencyStore()
    let ttl: Int64 = 86_400_000
    let lock: Int64 = 60_000

    func begin(_ database: any Database, key: String = "k", hash: String = "h", now: Int64 = 1000) async throws -> IdempotencyStore.BeginResult {
        try await database.withConnection { [store, ttl, lock] db in
            try await store.begin(db, scope: "user:1", key: key, requestHash: hash, now: now, ttlMilliseconds: ttl, lockTimeoutMilliseconds: lock)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func theFirstRequestOwnsTheKeyAndRetriesReplayItsResponse(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            #expect(try await begin(database) == .inProgress)
            #expect(try await begin(database, hash: "other") == .mismatch)
            let response = StoredResponse(status: 201, headers: ["Content-Type": "application/json"], body: Data(#"{"data":{"id":"x"}}"#.utf8))
            let done1 = try await finish(database, lockedAt: 1000, response)
            #expect(done1 == true)
            #expect(try await begin(database, now: 5000) == .replay(response))
            #expect(try await begin(database, hash: "other", now: 5000) == .mismatch)
        }
    }

    func finish(_ database: any Database, lockedAt: Int64, _ response: StoredResponse) async throws -> Bool {
        try await database.withConnection { [store] db in
            try await store.complete(db, scope: "user:1", key: "k", lockedAt: lockedAt, response: response)
        }
    }

    /// The owner a retry took the key over from (it looked dead) cannot complete it any
    /// more: inside its work's transaction that refusal rolls the work back, so only one of
    /// the two runs commits. A completed key is not completed twice either.
    @Test(arguments: TestEngine.allCases)
    func onlyTheCurrentOwnerCompletesAKey(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            #expect(try await begin(database, now: 1000 + lock) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000 + lock))
            let late = StoredResponse(status: 201, headers: [:], body: Data("late".utf8))
            let done2 = try await finish(database, lockedAt: 1000, late)
            #expect(done2 == false)
            let current = StoredResponse(status: 201, headers: [:], body: Data("current".utf8))
            let done3 = try await finish(database, lockedAt: 1000 + lock, current)
            #expect(done3 == true)
            let done4 = try await finish(database, lockedAt: 1000 + lock, late)
            #expect(done4 == false)
            #expect(try await begin(database, now: 1000 + lock + 1) == .replay(current))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func keysAreScopedPerCaller(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            let other = try await database.withConnection { [store, ttl, lock] db in
                try await store.begin(db, scope: "user:2", key: "k", requestHash: "h", now: 1000, ttlMilliseconds: ttl, lockTimeoutMilliseconds: lock)
            }
            #expect(other == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aReleasedKeyCanRunAgain(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            try await database.withConnection { [store] db in try await store.release(db, scope: "user:1", key: "k") }
            #expect(try await begin(database, hash: "different-now") == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anExpiredKeyIsForgotten(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            let response = StoredResponse(status: 200, headers: [:], body: Data("{}".utf8))
            let done5 = try await finish(database, lockedAt: 1000, response)
            #expect(done5 == true)
            #expect(try await begin(database, now: 1000 + ttl - 1) == .replay(response))
            #expect(try await begin(database, hash: "new", now: 1000 + ttl) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000 + ttl))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anAbandonedKeyIsTakenOverByExactlyOneRetry(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == IdempotencyStore.BeginResult.acquired(lockedAt: 1000))
            #expect(try await begin(database, now: 1000 + lock - 1) == .inProgress)
            let outcomes = try await withThrowingTaskGroup(of: IdempotencyStore.BeginResult.self) { group in
                for _ in 0..<10 { group.addTask { try await begin(database, now: 1000 + lock) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == IdempotencyStore.BeginResult.acquired(lockedAt: 1000 + lock) }.count == 1)
            #expect(outcomes.filter { $0 == .inProgress }.count == 9)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func concurrentFirstRequestsHaveOneOwner(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let outcomes = try await withThrowingTaskGroup(of: IdempotencyStore.BeginResult.self) { group in
                for _ in 0..<25 { group.addTask { try await begin(database) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == IdempotencyStore.BeginResult.acquired(lockedAt: 1000) }.count == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func purgeDeletesOnlyExpiredKeys(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database, key: "old", now: 0) == IdempotencyStore.BeginResult.acquired(lockedAt: 0))
            #expect(try await begin(database, key: "new", now: ttl - 10) == IdempotencyStore.BeginResult.acquired(lockedAt: ttl - 10))
            let purged = try await database.withConnection { [store, ttl] db in try await store.purgeExpired(db, now: ttl + 1) }
            #expect(purged == 1)
            #expect(try await begin(database, key: "new", now: ttl + 2) == .inProgress)
        }
    }
}
