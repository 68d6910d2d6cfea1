import HeraldCore
import HeraldRealtime
import Testing

private func event(_ seq: Int64?, room: String = "r") -> RealtimeEvent {
    RealtimeEvent(room: room, seq: seq, name: "e", payloadJSON: "\(seq ?? -1)", createdAt: 0)
}

@Suite struct SubscriptionTrackerTests {
    @Test func dropsEventsOfRoomsNotFollowedAndDuplicates() {
        var tracker = SubscriptionTracker()
        #expect(tracker.admit(event(1)) == .drop)
        tracker.follow("r")
        #expect(tracker.admit(event(3)) == .send)
        #expect(tracker.admit(event(3)) == .drop)
        #expect(tracker.admit(event(2)) == .drop)
        #expect(tracker.admit(event(4)) == .send)
        #expect(tracker.admit(event(nil)) == .send)
        tracker.leave("r")
        #expect(tracker.admit(event(5)) == .drop)
    }

    /// While a replay's events are being written out, live events stay held: an event sent
    /// live in between would reach the client before the replayed ones (12 before 11).
    @Test func aDrainedReplayHoldsLiveEventsUntilItEnds() {
        var tracker = SubscriptionTracker()
        tracker.beginReplay("r", after: 10)
        #expect(tracker.admit(event(12)) == .hold)
        #expect(tracker.drainReplay("r", replayed: [event(11), event(12)]).map(\.seq) == [11, 12])
        #expect(tracker.admit(event(13)) == .hold)
        #expect(tracker.endReplay("r")?.map(\.seq) == [13])
        #expect(tracker.endReplay("r") == nil)
        #expect(tracker.admit(event(14)) == .send)
        #expect(tracker.admit(event(13)) == .drop)
        // An unavailable replay sends only what was held; a room not followed has nothing.
        tracker.beginReplay("q", after: 0)
        #expect(tracker.admit(event(5, room: "q")) == .hold)
        #expect(tracker.drainReplay("q", replayed: nil).map(\.seq) == [5])
        #expect(tracker.endReplay("q") == nil)
        #expect(tracker.endReplay("nope") == nil)
    }

    @Test func everyRoomKeepsItsOwnCursorWhicheverLeavesFirst() {
        // The first room is kept inline and the others in a table: leaving the first promotes
        // another, and no cursor is lost or mixed up on the way.
        var tracker = SubscriptionTracker()
        for (index, room) in ["a", "b", "c"].enumerated() { tracker.follow(room, after: Int64(index * 10)) }
        #expect(Set(tracker.rooms) == ["a", "b", "c"])
        #expect(tracker.admit(event(5, room: "a")) == .send)
        #expect(tracker.admit(event(10, room: "b")) == .drop)  // b joined after 10
        #expect(tracker.admit(event(11, room: "b")) == .send)
        tracker.leave("a")
        #expect(!tracker.contains("a"))
        #expect(tracker.admit(event(6, room: "a")) == .drop)
        #expect(tracker.lastSeq("b") == 11 && tracker.lastSeq("c") == 20)
        tracker.follow("a", after: 100)
        #expect(tracker.lastSeq("a") == 100)
        tracker.leave("b")
        tracker.leave("c")
        #expect(tracker.rooms == ["a"])
        #expect(tracker.admit(event(101, room: "a")) == .send)
        #expect(tracker.admit(event(21, room: "c")) == .drop)
        tracker.leave("a")
        #expect(tracker.rooms.isEmpty)
        // A replay begun on a room already followed restarts its cursor in place.
        tracker.follow("r", after: 1)
        tracker.beginReplay("r", after: 3)
        #expect(tracker.rooms == ["r"] && tracker.lastSeq("r") == 3)
        #expect(tracker.admit(event(4)) == .hold)
        #expect(tracker.finishReplay("r", replayed: []).map(\.seq) == [4])
    }

    @Test func liveEventsDuringAReplayAreHeldThenMergedWithoutDuplicates() {
        var tracker = SubscriptionTracker()
        tracker.beginReplay("r", after: 10)
        // Live events 12 and 13 arrive while the replay (11, 12) is being read.
        #expect(tracker.admit(event(12)) == .hold)
        #expect(tracker.admit(event(13)) == .hold)
        let out = tracker.finishReplay("r", replayed: [event(11), event(12)])
        #expect(out.map(\.seq) == [11, 12, 13])
        #expect(tracker.admit(event(13)) == .drop)
        #expect(tracker.admit(event(14)) == .send)
        #expect(tracker.lastSeq("r") == 14)
    }

    @Test func anUnavailableReplayStillSendsTheHeldLiveEvents() {
        var tracker = SubscriptionTracker()
        tracker.beginReplay("r", after: 2)
        #expect(tracker.admit(event(40)) == .hold)
        let out = tracker.finishReplay("r", replayed: nil)
        #expect(out.map(\.seq) == [40])
        #expect(tracker.admit(event(41)) == .send)
    }
}

@Suite struct OutboundQueueTests {
    @Test func handsOutFramesInOrder() async {
        let queue = OutboundQueue(limitBytes: 1000)
        #expect(queue.enqueue(.text("a")))
        #expect(queue.enqueue(.binary([1, 2])))
        #expect(await queue.next() == .text("a"))
        #expect(await queue.next() == .binary([1, 2]))
    }

    @Test func aWaitingReaderIsWokenByTheNextFrame() async {
        let queue = OutboundQueue(limitBytes: 1000)
        async let frame = queue.next()
        try? await CancellableSleep.sleep(for: .milliseconds(20))
        queue.enqueue(.text("late"))
        #expect(await frame == .text("late"))
    }

    @Test func overflowClosesTheQueueAsASlowConsumer() async {
        let queue = OutboundQueue(limitBytes: 10)
        #expect(queue.enqueue(.text("12345")))
        #expect(queue.enqueue(.text("12345")))
        #expect(!queue.enqueue(.text("1")))
        #expect(queue.closeReason == .slowConsumer)
        #expect(await queue.next() == nil)
        #expect(!queue.enqueue(.text("after")))
    }

    @Test func aNormalCloseStillHandsOutWhatWasQueued() async {
        let queue = OutboundQueue(limitBytes: 100)
        queue.enqueue(.text("last words"))
        queue.close()
        #expect(await queue.next() == .text("last words"))
        #expect(await queue.next() == nil)
    }

    @Test func drainTakesEverythingUpToABudget() {
        let queue = OutboundQueue(limitBytes: 100)
        for text in ["aa", "bb", "cc"] { queue.enqueue(.text(text)) }
        #expect(queue.drain(maxBytes: 4) == [.text("aa"), .text("bb")])
        #expect(queue.drain() == [.text("cc")])
        #expect(queue.isEmpty)
    }
}

@Suite struct EventIDTests {
    @Test func parsesEventIDs() {
        #expect(RealtimeEvent.seq(fromEventID: "evt_42") == 42)
        #expect(RealtimeEvent.seq(fromEventID: "42") == 42)
        #expect(RealtimeEvent.seq(fromEventID: "evt_") == nil)
        #expect(RealtimeEvent.seq(fromEventID: "evt_-1") == nil)
        #expect(RealtimeEvent.seq(fromEventID: "evt_x") == nil)
        #expect(RealtimeEvent.seq(fromEventID: "evt_99999999999999999999") == nil)
    }
}
