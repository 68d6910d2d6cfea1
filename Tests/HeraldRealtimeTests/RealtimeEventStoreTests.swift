import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime

@Suite struct RealtimeEventStoreTests {
    /// A batch numbers each room's events on from where the room was, in the given order,
    /// whether a room is new, already used, or appears several times in the batch; and
    /// single appends afterwards continue the same sequence.
    @Test(arguments: TestEngine.allCases)
    func aBatchContinuesEveryRoomsSequence(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = RealtimeEventStore()
            let events: [(room: String, event: String, payload: String)] = [
                ("trip:a", "driver_location", "{\"n\":1}"), ("trip:a", "eta_update", "{\"n\":2}"),
                ("trip:b", "driver_location", "{\"n\":3}"), ("trip:c", "driver_location", "{\"n\":4}"), ("trip:c", "driver_location", "{\"n\":5}"),
            ]
            let seqs = try await database.transaction { db -> [Int64] in
                _ = try await store.append(db, room: "trip:b", event: "earlier", payload: "{}", now: 1)
                _ = try await store.append(db, room: "trip:b", event: "earlier", payload: "{}", now: 1)
                return try await store.appendBatch(db, events, now: 2)
            }
            #expect(seqs == [1, 2, 3, 1, 2])
            let (next, stored, last) = try await database.transaction { db in
                (
                    try await store.append(db, room: "trip:c", event: "after", payload: "{}", now: 3),
                    try await store.events(db, room: "trip:c", after: 0, limit: 10), try await store.lastSeq(db, room: "trip:a")
                )
            }
            #expect(next == 3 && last == 2)
            #expect(stored.map(\.seq) == [1, 2, 3] && stored.map(\.payload) == ["{\"n\":4}", "{\"n\":5}", "{}"])
            // Larger than one statement's chunk: 1,200 events over 700 rooms.
            let many = (0..<1_200).map { (room: "r\($0 % 700)", event: "e", payload: "{\"i\":\($0)}") }.sorted { $0.room < $1.room }
            let numbered = try await database.transaction { db in try await store.appendBatch(db, many, now: 4) }
            var expected: [String: Int64] = [:]
            for (event, seq) in zip(many, numbered) {
                expected[event.room, default: 0] += 1
                #expect(seq == expected[event.room])
            }
        }
    }
}
