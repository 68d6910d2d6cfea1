import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime
@testable import HeraldTrips

@Suite struct TripLocationWriterTests {
    static func row(_ index: Int) -> TripLocationRow {
        TripLocationRow(
            tripID: "tr_\(index % 100)", receivedAt: 1_000 + Int64(index), ordinal: Int64(index), sequence: Int64(index), latitude: 37.7,
            longitude: -122.4, accuracyM: 5, heading: nil, speedMps: nil, altitudeM: nil, batteryPercent: nil, isCharging: nil, clientAt: nil,
            shared: 1, warning: nil)
    }

    /// One flush publishes what accumulated as persisted events, in order, and writes the
    /// trail; a backlog beyond the bound keeps the newest half instead of growing forever.
    @Test func batchesInOrderAndBoundsABacklog() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let hub = RealtimeHub(database: database, clock: SystemClock(), logger: TestDatabase.logger)
            hub.attach(bus: LocalBus(hub: hub))
            let writer = TripLocationWriter(hub: hub, database: database, logger: TestDatabase.logger)
            for index in 0..<300 {
                writer.enqueue(
                    events: [TrackedEvent(room: "trip:tr_\(index % 3)", name: "driver_location", payload: ["i": .number(Double(index))])], row: Self.row(index))
            }
            #expect(await writer.flushOnce() == 600)
            let stored = try await database.withConnection { db in try await RealtimeEventStore().events(db, room: "trip:tr_1", after: 0, limit: 1_000) }
            #expect(stored.count == 100 && stored.map(\.seq) == Array(1...100))
            #expect(stored.first?.payload == "{\"i\":1}" && stored.last?.payload == "{\"i\":298}")
            let trail = try await database.withConnection { db in try await TripLocationStore().list(db, tripID: "tr_7", afterOrdinal: 0, limit: 100) }
            #expect(trail.map(\.ordinal) == [7, 107, 207])

            for index in 0..<(writer.maxQueuedEvents + 1) {
                writer.enqueue(
                    events: [TrackedEvent(room: "trip:tr_x", name: "driver_location", payload: ["i": .number(Double(index))])], row: Self.row(10_000 + index))
            }
            // The oldest half went; the rows (bounded higher) are all still there.
            #expect(writer.queued == (writer.maxQueuedEvents + 1 + 1) / 2 + writer.maxQueuedEvents + 1)
        }
    }
}
