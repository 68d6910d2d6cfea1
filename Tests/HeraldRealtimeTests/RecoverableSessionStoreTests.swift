import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@testable import HeraldRealtime

@Suite struct RecoverableSessionStoreTests {
    static func session(_ index: Int, user: String? = nil, namespace: String = "/", at time: Int64 = 1_000) -> RecoverableSession {
        RecoverableSession(
            pid: "pid_\(index)", socketID: "sid_\(index)", userID: user ?? "user_\(index)", namespace: namespace,
            rooms: [.init(room: "user:user_\(index)", base: Int64(index)), .init(room: "trip:tr_\(index)", base: 7)], disconnectedAt: time)
    }

    static func store(_ database: any Database, node: String = "node_a", clock: any HeraldClock = SystemClock()) -> RecoverableSessionStore {
        RecoverableSessionStore(database: database, clock: clock, nodeID: node, recoveryWindow: .seconds(120))
    }

    /// The row of `pid` as stored: its node (nil: disconnected) and time.
    static func row(_ database: any Database, _ pid: String) async throws -> (node: String?, updatedAt: Int64)? {
        try await database.withConnection { db in
            try await db.raw("SELECT node_id, updated_at FROM realtime_sessions WHERE pid = \(bind: pid)").first().map {
                (try $0.decode(column: "node_id", as: String?.self), try $0.decode(column: "updated_at", as: Int64.self))
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aBurstOfSavesAndTakesComesBackWhole(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = Self.store(database)
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
            let store = Self.store(database)
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
            try await RecoverableSessionStore.save([Self.session(5), newer], in: database, nodeID: "node_a")
            let store = Self.store(database)
            #expect(try await store.take(pid: "pid_5", userID: "user_5", namespace: "/", notBefore: 0) == newer)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aLiveSessionSurvivesItsNodeAndIsTakenWhateverItsAge(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let a = Self.store(database, node: "node_a")
            var live = Self.session(1, at: 1_000)
            a.markLive(Self.session(1, at: 500))
            a.markLive(live)  // the latest state of a pid is what is written
            try await a.flush()
            #expect(try await Self.row(database, "pid_1")?.node == "node_a")
            // Node A dies without a word; the client comes back to node B long after the row was
            // written: a live row has no window (only its owner holds the pid).
            let b = Self.store(database, node: "node_b")
            live.disconnectedAt = 1_000
            #expect(try await b.take(pid: "pid_1", userID: "user_1", namespace: "/", notBefore: 999_999) == live)
            // A disconnected row keeps its window.
            try await a.save(Self.session(2, at: 1_000))
            #expect(try await b.take(pid: "pid_2", userID: "user_2", namespace: "/", notBefore: 999_999) == nil)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aLateDisconnectOnTheOldNodeLeavesTheNewOwnersRow(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let a = Self.store(database, node: "node_a")
            let b = Self.store(database, node: "node_b")
            a.markLive(Self.session(1))
            try await a.flush()
            // The client moved to B (took its session there, B holds it live) before A noticed
            // the old connection was gone; A's save of the disconnect must not undo that.
            #expect(try await b.take(pid: "pid_1", userID: "user_1", namespace: "/", notBefore: 0) != nil)
            b.markLive(Self.session(1, at: 2_000))
            try await b.flush()
            try await a.save(Self.session(1, at: 3_000))
            let row = try await Self.row(database, "pid_1")
            #expect(row?.node == "node_b" && row?.updatedAt == 2_000)
            // B's own disconnect does turn it into a disconnected row.
            try await b.save(Self.session(1, at: 4_000))
            let after = try await Self.row(database, "pid_1")
            #expect(after?.node == nil && after?.updatedAt == 4_000)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aFlushThatRacedTheDisconnectDoesNotReviveTheRow(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let a = Self.store(database, node: "node_a")
            a.markLive(Self.session(1, at: 1_000))
            try await a.save(Self.session(1, at: 2_000))
            // The save dropped the pending live row: the next flush writes nothing for it…
            try await a.flush()
            #expect(try await Self.row(database, "pid_1")?.node == nil)
            // …and a live write already on its way when the disconnect landed changes nothing.
            try await RecoverableSessionStore.writeLive([Self.session(1, at: 1_500)], in: database, nodeID: "node_a")
            let row = try await Self.row(database, "pid_1")
            #expect(row?.node == nil && row?.updatedAt == 2_000)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aDeliberateCloseDeletesTheLiveRow(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let a = Self.store(database, node: "node_a")
            a.markLive(Self.session(1))
            a.markLive(Self.session(2))
            try await a.flush()
            a.forget(pid: "pid_1")
            a.markLive(Self.session(3))
            a.forget(pid: "pid_3")  // closed before its first flush: never written
            try await a.flush()
            #expect(try await Self.row(database, "pid_1") == nil)
            #expect(try await Self.row(database, "pid_2")?.node == "node_a")
            #expect(try await Self.row(database, "pid_3") == nil)
            // Another node's forget of the pid does not delete a row it does not hold.
            let b = Self.store(database, node: "node_b")
            b.forget(pid: "pid_2")
            try await b.flush()
            #expect(try await Self.row(database, "pid_2")?.node == "node_a")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func expiryReleasesDeadNodesRowsAndDropsOldOnes(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let now: Int64 = 10_000_000
            let a = Self.store(database, node: "node_a")
            let alive = Self.store(database, node: "node_alive")
            let dead = Self.store(database, node: "node_dead")
            a.markLive(Self.session(1, at: 1_000))
            alive.markLive(Self.session(2, at: 1_000))
            dead.markLive(Self.session(3, at: 1_000))
            try await a.flush()
            try await alive.flush()
            try await dead.flush()
            try await a.save(Self.session(4, at: now - 121_000))  // past the 120 s window
            try await a.save(Self.session(5, at: now - 60_000))
            try await database.withConnection { db in
                try await db.raw(
                    "INSERT INTO realtime_nodes (node_id, heartbeat_at) VALUES ('node_alive', \(bind: now - 5_000)), ('node_dead', \(bind: now - 20_000))"
                ).run()
            }
            try await a.expire(now: now)
            #expect(try await Self.row(database, "pid_1")?.node == "node_a")  // its own
            #expect(try await Self.row(database, "pid_2")?.node == "node_alive")  // a heartbeat 5 s old
            let released = try await Self.row(database, "pid_3")  // 20 s: dead, disconnected as of now
            #expect(released?.node == nil && released?.updatedAt == now)
            #expect(try await Self.row(database, "pid_4") == nil)
            #expect(try await Self.row(database, "pid_5")?.node == nil)
        }
    }
}
