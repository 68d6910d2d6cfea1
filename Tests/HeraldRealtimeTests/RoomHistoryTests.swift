import Testing

@testable import HeraldRealtime

@Suite struct RoomHistoryTests {
    static func event(_ seq: Int64, room: String = "trip:tr_1", payload: String = "{}") -> RealtimeEvent {
        RealtimeEvent(room: room, seq: seq, name: "tick", payloadJSON: payload, createdAt: seq * 10, ackToken: AckToken(.publisher, id: "ack_\(seq)"))
    }

    @Test func aContiguousRunAnswersEveryPositionItCovers() {
        var history = RoomHistory()
        history.noteLast("trip:tr_1", 3)
        for seq in Int64(4)...8 { history.append(Self.event(seq)) }
        #expect(history.replay("trip:tr_1", after: 3)?.map(\.seq) == [4, 5, 6, 7, 8])
        #expect(history.replay("trip:tr_1", after: 6)?.map(\.seq) == [7, 8])
        #expect(history.replay("trip:tr_1", after: 8)?.isEmpty == true)
        // Before the run, after what this node has seen, or an unknown room: ask the database.
        #expect(history.replay("trip:tr_1", after: 2) == nil)
        #expect(history.replay("trip:tr_1", after: 9) == nil)
        #expect(history.replay("trip:tr_2", after: 0) == nil)
        // A replay never asks a client for an ack.
        #expect(history.replay("trip:tr_1", after: 3)?.allSatisfy { $0.ackToken == nil } == true)
    }

    @Test func aSkippedSequenceRestartsTheRunAndDuplicatesAreIgnored() {
        var history = RoomHistory()
        for seq in Int64(1)...3 { history.append(Self.event(seq)) }
        history.append(Self.event(2))
        #expect(history.replay("trip:tr_1", after: 0)?.map(\.seq) == [1, 2, 3])
        history.append(Self.event(5))  // 4 never arrived here
        #expect(history.replay("trip:tr_1", after: 3) == nil)
        #expect(history.replay("trip:tr_1", after: 4)?.map(\.seq) == [5])
    }

    @Test func theDatabaseBeingAheadEmptiesTheRun() {
        var history = RoomHistory()
        for seq in Int64(1)...3 { history.append(Self.event(seq)) }
        history.noteLast("trip:tr_1", 2)  // an older read: nothing changes
        #expect(history.replay("trip:tr_1", after: 0)?.count == 3)
        history.noteLast("trip:tr_1", 6)  // 4…6 are committed but not seen here
        #expect(history.replay("trip:tr_1", after: 3) == nil)
        #expect(history.replay("trip:tr_1", after: 6)?.isEmpty == true)
        history.append(Self.event(5))  // arriving late: older than what the database said
        history.append(Self.event(7))
        #expect(history.replay("trip:tr_1", after: 6)?.map(\.seq) == [7])
    }

    @Test func boundsByEventsPerRoomEventSizeRoomsAndBytes() {
        var history = RoomHistory(maxEventsPerRoom: 4, maxEventBytes: 200, maxRooms: 2, maxBytes: 2_000)
        for seq in Int64(1)...10 { history.append(Self.event(seq)) }
        #expect(history.replay("trip:tr_1", after: 6)?.map(\.seq) == [7, 8, 9, 10])
        #expect(history.replay("trip:tr_1", after: 5) == nil)
        // Too large to keep: the room goes back to the database rather than keep a hole.
        history.append(Self.event(11, payload: String(repeating: "x", count: 300)))
        #expect(history.replay("trip:tr_1", after: 10) == nil)
        // A third room pushes one out.
        history.noteLast("a", 1)
        history.noteLast("b", 1)
        history.noteLast("c", 1)
        #expect(history.entries.count == 2)
        #expect(history.bytes == history.entries.values.map(\.bytes).reduce(0, +))

        // Over the byte budget everything goes (the database still has it), then it fills again.
        var small = RoomHistory(maxEventsPerRoom: 100, maxEventBytes: 1_000, maxRooms: 10, maxBytes: 1_000)
        let size = RoomHistory.size(Self.event(1, payload: String(repeating: "y", count: 120)))
        let fits = 1_000 / size
        for seq in Int64(1)...Int64(fits + 2) { small.append(Self.event(seq, payload: String(repeating: "y", count: 120))) }
        #expect(small.bytes <= 1_000 && small.bytes == small.entries.values.map(\.bytes).reduce(0, +))
        #expect(small.replay("trip:tr_1", after: 0) == nil)
        #expect(small.replay("trip:tr_1", after: Int64(fits + 1))?.map(\.seq) == [Int64(fits + 2)])
    }
}
