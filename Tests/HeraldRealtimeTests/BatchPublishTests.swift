import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime

/// A backend's batch on either bus: persisted and ephemeral events mixed, to several rooms;
/// each room's members get its events in the order given, persisted ones numbered and
/// replayable, ephemeral ones only delivered, and the answer lists the events as given.
@Suite struct BatchPublishTests {
    @Test(arguments: TestEngine.allCases)
    func aMixedBatchKeepsEachRoomsOrderAndNumbersOnlyWhatIsKept(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let ann = RecordingSubscriber(1, user: "ann")
                let bob = RecordingSubscriber(2, user: "bob")
                hub.join(ann, room: "user:ann")
                hub.join(bob, room: "user:bob")
                try await hub.publish("before", payload: .null, to: "user:bob")
                #expect(await bob.waitFor(1).count == 1)
                let batch = [
                    Publication(room: "user:bob", event: "b1", payloadJSON: "1", persist: false),
                    Publication(room: "user:ann", event: "a1", payloadJSON: #"{"k":"v"}"#),
                    Publication(room: "user:bob", event: "b2", payloadJSON: "2"),
                    Publication(room: "user:ann", event: "a2", payloadJSON: "null", persist: false),
                    Publication(room: "user:bob", event: "b3", payloadJSON: "3", persist: false),
                    Publication(room: "user:ann", event: "a3", payloadJSON: "[]"),
                ]
                let published = try await hub.publish(batch)
                #expect(published.map(\.name) == ["b1", "a1", "b2", "a2", "b3", "a3"], "the answer keeps the order given")
                #expect(published.map(\.seq) == [nil, 1, 2, nil, nil, 2])
                #expect(published.map(\.payloadJSON) == batch.map(\.payloadJSON))

                let annGot = await ann.waitFor(3)
                #expect(annGot.map(\.name) == ["a1", "a2", "a3"])
                #expect(annGot.map(\.seq) == [1, nil, 2])
                let bobGot = await bob.waitFor(4)
                #expect(bobGot.map(\.name) == ["before", "b1", "b2", "b3"])
                #expect(bobGot.map(\.seq) == [1, nil, 2, nil])

                // Only the persisted ones are kept, as one publish would keep them.
                guard case .recovered(let replayed) = try await hub.replay(room: "user:bob", after: 0) else {
                    Issue.record("user:bob should replay")
                    return
                }
                #expect(replayed.map(\.name) == ["before", "b2"])
                #expect(try await hub.lastSeq(room: "user:ann") == 2)
            }
        }
    }

    /// An ephemeral event too large for a notification travels by reference, so it is stored
    /// (as one publish does it); a batch of only small ephemeral events stores nothing.
    @Test func onPostgreSQLALargeEphemeralEventIsStoredAndSmallOnesAreNot() async throws {
        try await TestDatabase.with(.postgres) { database in
            try await withHub(database) { hub in
                let member = RecordingSubscriber(1, user: "ann")
                hub.join(member, room: "user:ann")
                let large = "\"" + String(repeating: "x", count: PostgresBus.inlineLimit) + "\""
                let small = try await hub.publish([
                    Publication(room: "user:ann", event: "s1", payloadJSON: "1", persist: false),
                    Publication(room: "user:ann", event: "s2", payloadJSON: "2", persist: false),
                ])
                #expect(small.map(\.seq) == [nil, nil])
                #expect(try await hub.lastSeq(room: "user:ann") == 0)
                let mixed = try await hub.publish([
                    Publication(room: "user:ann", event: "big", payloadJSON: large, persist: false),
                    Publication(room: "user:ann", event: "s3", payloadJSON: "3", persist: false),
                ])
                #expect(mixed.map(\.seq) == [1, nil])
                let got = await member.waitFor(4)
                #expect(got.map(\.name) == ["s1", "s2", "big", "s3"])
                #expect(got.map(\.payloadJSON.utf8.count) == [1, 1, large.utf8.count, 1])
            }
        }
    }
}
