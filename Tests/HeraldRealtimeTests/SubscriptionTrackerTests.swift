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
        try? await Task.sleep(for: .milliseconds(20))
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
