import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime

@Suite struct RecoverableSessionStoreTests {
    static func session(_ index: Int, user: String? = nil, namespace: String = "/", at time: Int64 = 1_000) -> RecoverableSession {
        RecoverableSession(
            pid: "pid_\(index)", socketID: "sid_\(index)", userID: user ?? "user_\(index)", namespace: namespace,
            rooms: [.init(room: "user:user_\(index)", base: Int64(index)), .init(room: "trip:tr_\(index)", base: 7)], disconnectedAt: time)
    }

    @Test(arguments: TestEngine.allCases)
    func aBurstOfSavesAndTakesComesBackWhole(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = RecoverableSessionStore(database: database)
            // 1,500 sockets drop at once: every save succeeds (shared statements, not 1,500 in a row).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<1500 { group.addTask { try await store.save(Self.session(index)) } }
                try await group.waitForAll()
            }
            let rows = try await database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM realtime_sessions").first()?.decode(column: "n", as: Int64.self)
            }
            #expect(rows == 1500)
            // They all come back at once too, each to its owner, each exactly as saved.
            let taken = try await withThrowingTaskGroup(of: (Int, RecoverableSession?).self) { group in
                for index in 0..<1500 {
                    group.addTask { (index, try await store.take(pid: "pid_\(index)", userID: "user_\(index)", namespace: "/", notBefore: 0)) }
                }
                return try await group.reduce(into: [Int: RecoverableSession?]()) { $0[$1.0] = $1.1 }
            }
            #expect(taken.count == 1500)
            #expect((0..<1500).allSatisfy { taken[$0] == Self.session($0) })
            // Taken means gone.
            let again = try await store.take(pid: "pid_7", userID: "user_7", namespace: "/", notBefore: 0)
            #expect(again == nil)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aTakeInTheSameBatchAsAnotherUsersDoesNotLeakOrDelete(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = RecoverableSessionStore(database: database)
            try await store.save(Self.session(1, user: "ann"))
            try await store.save(Self.session(2, user: "bob", namespace: "/driver"))
            try await store.save(Self.session(3, user: "cat", at: 10))
            // Wrong owner, wrong namespace, too old, and the rightful takes, all concurrent.
            async let mallory = store.take(pid: "pid_1", userID: "mallory", namespace: "/", notBefore: 0)
            async let wrongNamespace = store.take(pid: "pid_2", userID: "bob", namespace: "/", notBefore: 0)
            async let tooOld = store.take(pid: "pid_3", userID: "cat", namespace: "/", notBefore: 500)
            #expect(try await mallory == nil)
            #expect(try await wrongNamespace == nil)
            #expect(try await tooOld == nil)
            // Their owners still have them (the one past the window was spent: taking it deleted it).
            #expect(try await store.take(pid: "pid_1", userID: "ann", namespace: "/", notBefore: 0) == Self.session(1, user: "ann"))
            #expect(try await store.take(pid: "pid_2", userID: "bob", namespace: "/driver", notBefore: 0) == Self.session(2, user: "bob", namespace: "/driver"))
        }
    }

    @Test func theLastSaveOfAPidInABatchWins() async throws {
        try await TestDatabase.with(.sqlite) { database in
            var newer = Self.session(5)
            newer.rooms.append(.init(room: "job:jb_1", base: 3))
            newer.disconnectedAt = 2_000
            try await RecoverableSessionStore.save([Self.session(5), newer], in: database)
            let store = RecoverableSessionStore(database: database)
            #expect(try await store.take(pid: "pid_5", userID: "user_5", namespace: "/", notBefore: 0) == newer)
        }
    }
}
