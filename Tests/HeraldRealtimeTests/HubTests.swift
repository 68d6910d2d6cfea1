import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import HeraldRealtime

/// Runs `body` with a hub on `database` and the right bus for its engine (the bus's LISTEN
/// loop running on PostgreSQL).
func withHub<T: Sendable>(
    _ database: any Database, _ body: @Sendable @escaping (RealtimeHub) async throws -> T
) async throws -> T {
    let hub = RealtimeHub(database: database, clock: SystemClock(), logger: testLogger)
    guard let postgres = database as? HeraldStorage.PostgresDatabase else {
        hub.attach(bus: LocalBus(hub: hub))
        return try await body(hub)
    }
    let bus = PostgresBus(hub: hub, client: postgres.client, nodeID: Identifier.make("node"), logger: testLogger)
    hub.attach(bus: bus)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await bus.run()
            return nil
        }
        group.addTask {
            await bus.waitUntilListening()
            return try await body(hub)
        }
        defer { group.cancelAll() }
        while let result = try await group.next() {
            if let value = result { return value }
        }
        throw CancellationError()
    }
}

@Suite struct HubTests {
    @Test(arguments: TestEngine.allCases)
    func membersOfARoomReceiveItsEventsInOrder(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let a = RecordingSubscriber(1, user: "ann")
                let b = RecordingSubscriber(2, user: "bob")
                let outsider = RecordingSubscriber(3)
                hub.join(a, room: "trip:1")
                hub.join(b, room: "trip:1")
                hub.join(outsider, room: "trip:2")
                for index in 1...5 {
                    try await hub.publish("tick", payload: ["n": .number(Double(index))], to: "trip:1")
                }
                let got = await a.waitFor(5)
                #expect(got.map(\.seq) == [1, 2, 3, 4, 5])
                #expect(got.map(\.payloadJSON) == (1...5).map { #"{"n":\#($0)}"# })
                #expect(got.allSatisfy { $0.name == "tick" && $0.room == "trip:1" })
                #expect(await b.waitFor(5).count == 5)
                try await CancellableSleep.sleep(for: .milliseconds(50))
                #expect(outsider.events.isEmpty)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func ephemeralEventsAreDeliveredButNotKept(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let a = RecordingSubscriber(1)
                hub.join(a, room: "driver:7")
                let event = try await hub.publish("location", payload: ["lat": 1.5], to: "driver:7", persist: false)
                #expect(event.seq == nil)
                let got = await a.waitFor(1)
                #expect(got.first?.seq == nil)
                #expect(got.first?.name == "location")
                #expect(try await hub.lastSeq(room: "driver:7") == 0)
            }
        }
    }

    /// An event that asks for an ack is delivered with its token but never kept: a client that
    /// reconnects and replays the room does not get it a second time (its ack, or the push
    /// fallback when none comes, decides its fate), and it takes no place in the sequence.
    @Test(arguments: TestEngine.allCases)
    func ackCarryingEventsAreDeliveredButNeverReplayed(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let a = RecordingSubscriber(1, user: "ann")
                hub.join(a, room: "user:ann")
                try await hub.publish("before", payload: 1, to: "user:ann")
                let asked = try await hub.publish(
                    "notification", payload: ["id": "ntf_1"], to: "user:ann", ackToken: AckToken(.init(rawValue: "test"), id: "dlv_1"))
                try await hub.publish("after", payload: 2, to: "user:ann")
                #expect(asked.seq == nil)
                let got = await a.waitFor(3)
                #expect(got.map(\.name) == ["before", "notification", "after"])
                #expect(got[1].ackToken == AckToken(.init(rawValue: "test"), id: "dlv_1") && got[1].seq == nil)
                #expect(try await hub.lastSeq(room: "user:ann") == 2)
                guard case .recovered(let replayed) = try await hub.replay(room: "user:ann", after: 0) else {
                    Issue.record("the room's history is gone")
                    return
                }
                #expect(replayed.map(\.name) == ["before", "after"])
                let rows = try await database.withConnection { db in
                    try await db.raw("SELECT COUNT(*) AS n FROM realtime_events WHERE room = 'user:ann'").first()?.decode(column: "n", as: Int.self)
                }
                #expect(rows == 2)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func recentReplaysComeFromMemoryAndGapsFromTheDatabase(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                // (On PostgreSQL events reach the hub through LISTEN: wait until they have.)
                let member = RecordingSubscriber(1, user: "ann")
                hub.join(member, room: "trip:mem")
                for index in 1...4 { try await hub.publish("e", payload: .number(Double(index)), to: "trip:mem") }
                #expect(await member.waitFor(4).count == 4)
                // Rows gone from the table: only the hub's memory can still answer.
                try await database.withConnection { db in try await db.raw("DELETE FROM realtime_events WHERE room = 'trip:mem'").run() }
                guard case .recovered(let events) = try await hub.replay(room: "trip:mem", after: 1) else {
                    Issue.record("recent events should replay from memory")
                    return
                }
                #expect(events.map(\.seq) == [2, 3, 4] && events.map(\.payloadJSON) == ["2", "3", "4"])
                // A position this node has not seen (ahead of it) goes to the database, which
                // knows the room's last sequence is 4: unavailable, not an empty success.
                #expect(try await hub.replay(room: "trip:mem", after: 5) == .unavailable)
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func replayReturnsEverythingAfterTheGivenEventOrSaysUnavailable(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let member = RecordingSubscriber(1, user: "ann")
                hub.join(member, room: "job:9")
                for index in 1...6 {
                    try await hub.publish("e", payload: .number(Double(index)), to: "job:9")
                }
                #expect(await member.waitFor(6).count == 6)
                #expect(
                    try await hub.replay(room: "job:9", after: 4)
                        == .recovered([
                            RealtimeEvent(
                                room: "job:9", seq: 5, name: "e", payloadJSON: "5", createdAt: try #require(try await hub.replayedCreatedAt("job:9", 5))),
                            RealtimeEvent(
                                room: "job:9", seq: 6, name: "e", payloadJSON: "6", createdAt: try #require(try await hub.replayedCreatedAt("job:9", 6))),
                        ]))
                #expect(try await hub.replay(room: "job:9", after: 6) == .recovered([]))
                // From the future (e.g. a client that talked to a reset database): unavailable.
                #expect(try await hub.replay(room: "job:9", after: 7) == .unavailable)
                // A never-used room with a client at 0 has nothing to replay.
                #expect(try await hub.replay(room: "job:none", after: 0) == .recovered([]))

                // Trim history: a client behind the trimmed part gets `unavailable`, never a partial replay.
                _ = try await database.withConnection { db in
                    try await RealtimeEventStore().trim(db, before: 0, keepPerRoom: 2)
                }
                // This node still holds them in its recent history: complete from memory.
                if case .recovered(let events) = try await hub.replay(room: "job:9", after: 3) {
                    #expect(events.map(\.seq) == [4, 5, 6])
                } else {
                    Issue.record("the node's recent history should replay")
                }
                // Another node (or this one after a restart) has only the database.
                let restarted = RealtimeHub(database: database, clock: SystemClock(), logger: testLogger)
                #expect(try await restarted.replay(room: "job:9", after: 3) == .unavailable)
                if case .recovered(let events) = try await restarted.replay(room: "job:9", after: 4) {
                    #expect(events.map(\.seq) == [5, 6])
                } else {
                    Issue.record("the kept tail should replay")
                }
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func concurrentPublishersKeepEachRoomGapFreeAndOrdered(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let member = RecordingSubscriber(1)
                hub.join(member, room: "busy")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for publisher in 0..<4 {
                        group.addTask {
                            for index in 0..<25 {
                                try await hub.publish("e", payload: .string("\(publisher)-\(index)"), to: "busy")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let got = await member.waitFor(100)
                #expect(got.map(\.seq) == (1...100).map { Int64($0) })
            }
        }
    }

    @Test func presenceCountsUsersNotConnections() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let changes = RecordedChanges()
            let hub = RealtimeHub(database: database, clock: SystemClock(), logger: testLogger)
            hub.onPresenceChange { user, online in changes.append("\(user):\(online)") }
            hub.attach(bus: LocalBus(hub: hub))
            let phone = RecordingSubscriber(1, user: "ann")
            let tablet = RecordingSubscriber(2, user: "ann")
            hub.join(phone, room: "user:ann")
            hub.join(tablet, room: "user:ann")
            #expect(hub.isConnectedHere("ann"))
            hub.unregister(phone)
            #expect(hub.isConnectedHere("ann"))
            #expect(hub.memberCount("user:ann") == 1)
            hub.unregister(tablet)
            #expect(!hub.isConnectedHere("ann"))
            #expect(hub.memberCount("user:ann") == 0)
            #expect(changes.values == ["ann:true", "ann:false"])
        }
    }

    @Test func connectionCountLeavesOutServerSideFollowers() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let hub = RealtimeHub(database: database, clock: SystemClock(), logger: testLogger)
            hub.attach(bus: LocalBus(hub: hub))
            let tracker = RecordingSubscriber(1 << 60, client: false)
            let phone = RecordingSubscriber(1, user: "ann")
            hub.join(tracker, room: "$trips")
            #expect(hub.connectionCount == 0)
            hub.join(phone, room: "user:ann")
            hub.join(phone, room: "trip:1")
            #expect(hub.connectionCount == 1)
            hub.unregister(phone)
            #expect(hub.connectionCount == 0)
            hub.unregister(tracker)
            hub.unregister(tracker)
            #expect(hub.connectionCount == 0)
            hub.register(phone)
            #expect(hub.connectionCount == 1)
        }
    }

    @Test func leavingARoomStopsDelivery() async throws {
        try await TestDatabase.with(.sqlite) { database in
            try await withHub(database) { hub in
                let a = RecordingSubscriber(1)
                hub.join(a, room: "r")
                try await hub.publish("one", payload: .null, to: "r")
                // Publishing returns before the fan-out; wait for it before leaving.
                await hub.localDeliveriesSettled()
                hub.leave(a, room: "r")
                try await hub.publish("two", payload: .null, to: "r")
                await hub.localDeliveriesSettled()
                #expect(a.events.map(\.name) == ["one"])
            }
        }
    }
}

final class RecordedChanges: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ value: String) { storage.withLock { $0.append(value) } }
    var values: [String] { storage.withLock { $0 } }
}

extension RealtimeHub {
    /// The stored creation time of one event (tests compare whole events).
    func replayedCreatedAt(_ room: String, _ seq: Int64) async throws -> Int64? {
        try await database.withConnection { db in
            try await RealtimeEventStore().event(db, room: room, seq: seq)?.createdAt
        }
    }
}
