import Foundation
import HeraldCore
import HeraldRealtime
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

/// Two hubs, each with its own PostgreSQL pool and LISTEN connection, on one database: the
/// multi-node setup without processes.
@Suite(.timeLimit(.minutes(10))) struct TwoNodeBusTests {
    @Test func anEventPublishedOnOneNodeReachesMembersOnTheOther() async throws {
        try await withTwoNodes { nodeA, nodeB in
            let onA = RecordingSubscriber(1)
            let onB = RecordingSubscriber(2)
            nodeA.join(onA, room: "trip:1")
            nodeB.join(onB, room: "trip:1")
            try await nodeA.publish("from-a", payload: ["x": 1], to: "trip:1")
            try await nodeB.publish("from-b", payload: .string(String(repeating: "y", count: 9000)), to: "trip:1")
            try await nodeB.publish("ephemeral", payload: ["lat": 1], to: "trip:1", persist: false)
            let seenOnA = await onA.waitFor(3)
            let seenOnB = await onB.waitFor(3)
            #expect(seenOnA.map(\.name) == ["from-a", "from-b", "ephemeral"])
            #expect(seenOnB.map(\.name) == ["from-a", "from-b", "ephemeral"])
            #expect(seenOnB.map(\.seq) == [1, 2, nil])
            // The large payload travelled by reference and arrives whole.
            #expect(seenOnA[1].payloadJSON.utf8.count == 9002)
            // B replays what A wrote.
            if case .recovered(let events) = try await nodeB.replay(room: "trip:1", after: 0) {
                #expect(events.map(\.name) == ["from-a", "from-b"])
            } else {
                Issue.record("expected a replay")
            }
        }
    }

    /// Node A keeps a room's recent events in memory while it has members there. Once nobody
    /// on A is in the room, its bus skips the room's events, so what A kept must not answer a
    /// later replay: events published on B meanwhile would be missing from it.
    @Test func aNodeThatStoppedFollowingARoomReplaysItFromTheDatabase() async throws {
        try await withTwoNodes { nodeA, nodeB in
            let rider = RecordingSubscriber(1)
            nodeA.join(rider, room: "trip:9")
            for index in 1...2 { try await nodeB.publish("e", payload: .number(Double(index)), to: "trip:9") }
            #expect(await rider.waitFor(2).map(\.seq) == [1, 2])
            // The rider's socket dies (nobody on A in the room); B goes on publishing.
            nodeA.leave(rider, room: "trip:9")
            for index in 3...4 { try await nodeB.publish("e", payload: .number(Double(index)), to: "trip:9") }
            // Let A's bus see (and skip) 3 and 4.
            let watcher = RecordingSubscriber(3)
            nodeB.join(watcher, room: "trip:9")
            try await nodeB.publish("e", payload: 5, to: "trip:9")
            _ = await watcher.waitFor(1)
            try await CancellableSleep.sleep(for: .milliseconds(200))
            // The rider comes back to A: rejoin, then replay after what it had.
            let back = RecordingSubscriber(4)
            nodeA.join(back, room: "trip:9")
            guard case .recovered(let events) = try await nodeA.replay(room: "trip:9", after: 2) else {
                Issue.record("expected a replay from the database")
                return
            }
            #expect(events.map(\.seq) == [3, 4, 5])
        }
    }

    /// A wave of users coming and going (more than the 500 rows of one statement) is written in a
    /// few statements and announced together: the other node sees exactly who is online, and
    /// a follower of a user's presence hears them come and go once each.
    @Test func presenceOfManyUsersReachesTheOtherNode() async throws {
        try await withTwoNodes { nodeA, nodeB in
            let presenceA = PresenceService(hub: nodeA, nodeID: "node-a", logger: testLogger)
            let presenceB = PresenceService(hub: nodeB, nodeID: "node-b", logger: testLogger)
            let users = (0..<700).map { "wave-\($0)" }
            let follower = RecordingSubscriber(9_999)
            nodeB.join(follower, room: "presence:wave-7")
            let connections = users.enumerated().map { RecordingSubscriber(UInt64($0.offset + 1), user: $0.element) }
            for (connection, user) in zip(connections, users) { nodeA.join(connection, room: "user:\(user)") }
            try await presenceA.sync()
            #expect(try await presenceB.onlineUsers(users) == Set(users))
            // Most of them leave (wave-7 among them), a hundred stay.
            for connection in connections.dropLast(100) { nodeA.unregister(connection) }
            try await presenceA.sync()
            #expect(try await presenceB.onlineUsers(users) == Set(users.suffix(100)))
            #expect(try await presenceB.isOnline("wave-7") == false)
            let heard = await follower.waitFor(2)
            let payloads = try heard.map { try JSONDecoder().decode([String: JSONValue].self, from: Data($0.payloadJSON.utf8)) }
            #expect(payloads == [["user_id": "wave-7", "online": true], ["user_id": "wave-7", "online": false]])
            // Nothing new: a sync writes and announces nothing more.
            try await presenceA.sync()
            try await CancellableSleep.sleep(for: .milliseconds(200))
            #expect(follower.events.count == 2)
        }
    }

    /// Ephemeral events published at once go out in batches (several notices to a
    /// notification): every one reaches the other node exactly once, each publisher's in the
    /// order it published them, and a payload near the notification limit travels too.
    @Test func ephemeralEventsPublishedAtOnceArriveOnceEachInOrder() async throws {
        try await withTwoNodes { nodeA, nodeB in
            let onB = RecordingSubscriber(1)
            nodeB.join(onB, room: "user:many")
            let publishers = 8
            let each = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for publisher in 0..<publishers {
                    group.addTask {
                        for index in 0..<each {
                            try await nodeA.publish(
                                "tick", payload: ["p": .number(Double(publisher)), "i": .number(Double(index))], to: "user:many", persist: false)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let big = String(repeating: "z", count: 6_500)
            try await nodeA.publish("big", payload: .string(big), to: "user:many", persist: false)
            let seen = await onB.waitFor(publishers * each + 1)
            #expect(seen.count == publishers * each + 1)
            var next = [Int](repeating: 0, count: publishers)
            for event in seen where event.name == "tick" {
                guard case .object(let fields) = try JSONDecoder().decode(JSONValue.self, from: Data(event.payloadJSON.utf8)),
                    case .number(let p)? = fields["p"], case .number(let i)? = fields["i"]
                else {
                    Issue.record("unexpected payload \(event.payloadJSON)")
                    continue
                }
                #expect(Int(i) == next[Int(p)], "publisher \(Int(p)) out of order or twice")
                next[Int(p)] = Int(i) + 1
            }
            #expect(next == [Int](repeating: each, count: publishers))
            #expect(seen.last?.name == "big" && seen.last?.payloadJSON.utf8.count == big.utf8.count + 2)
            #expect(seen.allSatisfy { $0.seq == nil })
        }
    }

    /// A publisher on node A waits for an ack that a client on node B sends: the ack crosses
    /// the bus (it is the hub's own kind, no module's observer sees it); without any ack the
    /// wait ends at the timeout (and answers "not acknowledged").
    @Test func anAckOnAnotherNodeReachesTheWaitingPublisher() async throws {
        try await withTwoNodes { nodeA, nodeB in
            let onB = RecordingSubscriber(2, user: "ann")
            nodeB.join(onB, room: "user:ann")
            let observed = Observed()
            nodeB.onAcknowledge(.publisher) { id in observed.add(id) }
            async let acknowledged = nodeA.publish("offer", payload: ["job": "j1"], to: "user:ann", ackTimeout: Patience.limit)
            let delivered = await onB.waitFor(1)
            let token = try #require(delivered.first?.ackToken)
            #expect(token.kind == .publisher)
            await nodeB.acknowledge(token)
            #expect(try await acknowledged)
            #expect(observed.tokens.isEmpty)
            // Nobody acknowledges j2: the wait ends (else the time limit) and answers false.
            let unanswered = try await nodeA.publish("offer", payload: ["job": "j2"], to: "user:ann", ackTimeout: .milliseconds(300))
            #expect(!unanswered)
        }
    }
}

/// Runs `body` with two hubs on one fresh PostgreSQL database, each with its own pool and bus.
func withTwoNodes(_ body: @Sendable @escaping (RealtimeHub, RealtimeHub) async throws -> Void) async throws {
    // makeURL throws without HERALD_TEST_POSTGRES_URL: these tests fail rather than pass unrun.
    let url = try await TestDatabase.makeURL(.postgres)
    guard case .postgres(let location) = try DatabaseURL(parsing: url) else {
        Issue.record("the test database is not PostgreSQL: \(url)")
        return
    }
    // A long wait for a pooled connection: a loaded machine waits instead of failing.
    let first = PostgresDatabase(location: location, maxConnections: 5, acquireTimeout: Patience.limit, logger: testLogger)
    let second = PostgresDatabase(location: location, maxConnections: 5, acquireTimeout: Patience.limit, logger: testLogger)
    try await DatabaseFactoryForTests.running([first, second]) {
        try await Migrator(sets: [RealtimeMigrations.set]).migrate(first, logger: testLogger)
        try await withHub(first) { nodeA in
            try await withHub(second) { nodeB in try await body(nodeA, nodeB) }
        }
    }
}

/// Runs the databases' services (pools) around `body`.
enum DatabaseFactoryForTests {
    static func running(_ databases: [any Database], _ body: @Sendable @escaping () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for database in databases {
                if let service = database.service {
                    group.addTask {
                        try await service.run()
                        return false
                    }
                }
            }
            group.addTask {
                try await body()
                return true
            }
            defer { group.cancelAll() }
            while let done = try await group.next() {
                if done { return }
            }
        }
    }
}

/// Collects ack tokens seen by an observer.
final class Observed: Sendable {
    private let seen = Mutex<[String]>([])
    func add(_ token: String) { seen.withLock { $0.append(token) } }
    var tokens: [String] { seen.withLock { $0 } }
}
