import Foundation
import HeraldStorage
import HeraldTestSupport
import Testing

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
            #expect(try await begin(database) == .acquired)
            #expect(try await begin(database) == .inProgress)
            #expect(try await begin(database, hash: "other") == .mismatch)
            let response = StoredResponse(status: 201, headers: ["Content-Type": "application/json"], body: Data(#"{"data":{"id":"x"}}"#.utf8))
            try await database.withConnection { [store] db in try await store.complete(db, scope: "user:1", key: "k", response: response) }
            #expect(try await begin(database, now: 5000) == .replay(response))
            #expect(try await begin(database, hash: "other", now: 5000) == .mismatch)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func keysAreScopedPerCaller(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == .acquired)
            let other = try await database.withConnection { [store, ttl, lock] db in
                try await store.begin(db, scope: "user:2", key: "k", requestHash: "h", now: 1000, ttlMilliseconds: ttl, lockTimeoutMilliseconds: lock)
            }
            #expect(other == .acquired)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aReleasedKeyCanRunAgain(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == .acquired)
            try await database.withConnection { [store] db in try await store.release(db, scope: "user:1", key: "k") }
            #expect(try await begin(database, hash: "different-now") == .acquired)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anExpiredKeyIsForgotten(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == .acquired)
            let response = StoredResponse(status: 200, headers: [:], body: Data("{}".utf8))
            try await database.withConnection { [store] db in try await store.complete(db, scope: "user:1", key: "k", response: response) }
            #expect(try await begin(database, now: 1000 + ttl - 1) == .replay(response))
            #expect(try await begin(database, hash: "new", now: 1000 + ttl) == .acquired)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anAbandonedKeyIsTakenOverByExactlyOneRetry(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database) == .acquired)
            #expect(try await begin(database, now: 1000 + lock - 1) == .inProgress)
            let outcomes = try await withThrowingTaskGroup(of: IdempotencyStore.BeginResult.self) { group in
                for _ in 0..<10 { group.addTask { try await begin(database, now: 1000 + lock) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .acquired }.count == 1)
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
            #expect(outcomes.filter { $0 == .acquired }.count == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func purgeDeletesOnlyExpiredKeys(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            #expect(try await begin(database, key: "old", now: 0) == .acquired)
            #expect(try await begin(database, key: "new", now: ttl - 10) == .acquired)
            let purged = try await database.withConnection { [store, ttl] db in try await store.purgeExpired(db, now: ttl + 1) }
            #expect(purged == 1)
            #expect(try await begin(database, key: "new", now: ttl + 2) == .inProgress)
        }
    }
}
