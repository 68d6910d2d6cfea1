import HeraldCore
import Synchronization
import Testing

@testable import HeraldRealtime

/// Counts how often a queue tells its consumer there is work.
final class CountingConsumer: OutboundQueueConsumer {
    let told = Atomic<Int>(0)
    func outboundQueueHasWork() { told.add(1, ordering: .relaxed) }
    var count: Int { told.load(ordering: .relaxed) }
}

extension OutboundQueue {
    /// A consumer's take, with the frames it was handed collected.
    func takeFrames(maxBytes: Int) -> (frames: [OutboundFrame], take: OutboundTake) {
        var frames: [OutboundFrame] = []
        let take = takeBatch(maxBytes: maxBytes) { frames.append($0) }
        return (frames, take)
    }
}

/// The push side of `OutboundQueue` that event-loop WebSocket transports use.
@Suite struct OutboundConsumerTests {
    @Test func theConsumerIsToldOncePerEmptyingAndTakesEverythingQueuedMeanwhile() {
        let queue = OutboundQueue(limitBytes: 1000)
        let consumer = CountingConsumer()
        queue.enqueue(.text("before"))
        queue.attach(consumer)
        #expect(consumer.count == 1)  // something was already waiting
        queue.enqueue(.text("a"))
        queue.enqueue(.binary([1, 2, 3]))
        #expect(consumer.count == 1)  // not told again until it has taken everything
        let batch = queue.takeFrames(maxBytes: 1000)
        #expect(batch.frames == [.text("before"), .text("a"), .binary([1, 2, 3])])
        #expect(batch.take == OutboundTake(taken: 3, more: false, finished: nil))
        #expect(queue.queuedBytes == 0)
        queue.enqueue(.text("next"))
        #expect(consumer.count == 2)
    }

    @Test func aBatchStopsAtItsByteBoundButTakesAtLeastOneFrame() {
        let queue = OutboundQueue(limitBytes: 1000)
        let consumer = CountingConsumer()
        queue.attach(consumer)
        queue.enqueue(.text("12345678"))
        queue.enqueue(.text("abc"))
        let first = queue.takeFrames(maxBytes: 4)
        #expect(first.frames == [.text("12345678")])
        #expect(first.take.more)
        queue.enqueue(.text("d"))
        #expect(consumer.count == 1)  // still counts as told: the consumer comes back for the rest
        let second = queue.takeFrames(maxBytes: 4)
        #expect(second.frames == [.text("abc"), .text("d")])
        #expect(!second.take.more)
    }

    @Test func closingTellsTheConsumerWhichFinishesAfterTheLastFrame() {
        let queue = OutboundQueue(limitBytes: 1000)
        let consumer = CountingConsumer()
        queue.attach(consumer)
        queue.enqueue(.text("last words"))
        queue.close()
        #expect(consumer.count == 1)
        let batch = queue.takeFrames(maxBytes: 1000)
        #expect(batch.frames == [.text("last words")])
        #expect(batch.take.finished == .closed)
    }

    @Test func anOverflowDropsWhatWasQueuedAndFinishesAsASlowConsumer() {
        let queue = OutboundQueue(limitBytes: 10)
        let consumer = CountingConsumer()
        queue.attach(consumer)
        queue.enqueue(.text("12345"))
        _ = queue.takeFrames(maxBytes: 100)
        queue.enqueue(.text("12345"))
        queue.enqueue(.text("12345"))
        #expect(!queue.enqueue(.text("1")))
        let batch = queue.takeFrames(maxBytes: 100)
        #expect(batch.frames.isEmpty)
        #expect(batch.take.finished == .slowConsumer)
    }

    @Test func aDetachedConsumerIsNotToldAnyMore() {
        let queue = OutboundQueue(limitBytes: 1000)
        let consumer = CountingConsumer()
        queue.attach(consumer)
        queue.detach()
        queue.enqueue(.text("a"))
        queue.close()
        #expect(consumer.count == 0)
    }
}

@Suite struct SerialMailboxTests {
    /// Order, no overlap and the pause/resume signals are what is checked, not speed: early in a
    /// parallel run the two cooperative threads can be busy for seconds at a time.
    @Test func itemsAreHandledOneAtATimeInOrderAndReadingPausesWhileTooManyWait() async throws {
        let handled = Mutex<[Int]>([])
        let inFlight = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let signals = Mutex<[Bool]>([])
        let mailbox = SerialMailbox<Int>(limit: 8) { paused in signals.withLock { $0.append(paused) } }
        let process: @Sendable (Int) async -> Void = { item in
            if inFlight.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
            try? await CancellableSleep.sleep(for: .microseconds(200))
            handled.withLock { $0.append(item) }
            inFlight.subtract(1, ordering: .relaxed)
        }
        for item in 0..<40 { mailbox.post(item, process: process) }
        let clock = ContinuousClock()
        let started = clock.now
        while handled.withLock({ $0.count }) < 40, clock.now - started < .seconds(600) {
            try await CancellableSleep.sleep(for: .milliseconds(10))
        }
        #expect(handled.withLock { $0 } == Array(0..<40))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
        // Paused once more than 8 waited, resumed once half were handled.
        #expect(signals.withLock { $0 } == [true, false])
        // A later item starts a new run.
        mailbox.post(40, process: process)
        while handled.withLock({ $0.count }) < 41, clock.now - started < .seconds(600) {
            try await CancellableSleep.sleep(for: .milliseconds(10))
        }
        #expect(handled.withLock { $0.last } == 40)
    }
}

@Suite struct BroadcastFramesTests {
    @Test func aFrameIsBuiltOncePerKeyInARow() {
        let frames = BroadcastFrames()
        var built = 0
        let make = { () -> String in
            built += 1
            return "frame \(built)"
        }
        #expect(frames.frame(for: "/", offset: "5", make) == "frame 1")
        #expect(frames.frame(for: "/", offset: "5", make) == "frame 1")
        #expect(frames.frame(for: "/", offset: "6", make) == "frame 2")
        #expect(built == 2)
    }
}
