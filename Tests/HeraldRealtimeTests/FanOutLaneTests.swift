import HeraldCore
import Synchronization
import Testing

@testable import HeraldRealtime

/// The hub's fan-out lane: strict order, posters answered before the fan-out, and a bound.
@Suite struct FanOutLaneTests {
    static func event(_ n: Int) -> RealtimeEvent {
        RealtimeEvent(room: "r", seq: Int64(n), name: "e\(n)", payloadJSON: "null", createdAt: 0)
    }

    @Test func eventsAreFannedOutOnceEachInTheOrderPosted() async {
        let lane = FanOutLane(limit: 64)
        let seen = Mutex<[Int64]>([])
        for n in 1...2_000 {
            await lane.post(Self.event(n)) { event in seen.withLock { $0.append(event.seq!) } }
        }
        await lane.idle()
        #expect(seen.withLock { $0 } == (1...2_000).map(Int64.init))
    }

    @Test func aPosterIsAnsweredBeforeTheFanOutAndWaitsOnlyWhenTheLaneIsFull() async throws {
        let lane = FanOutLane(limit: 4)
        // Not a DispatchSemaphore: its wait blocks one of the two cooperative threads, and the
        // whole parallel suite stalls behind it.
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let seen = Mutex<[Int64]>([])
        let fanOut: @Sendable (RealtimeEvent) async -> Void = { event in
            if event.seq == 1 {  // the first fan-out stalls until released
                for await _ in released { break }
            }
            seen.withLock { $0.append(event.seq!) }
        }
        // The first event stalls the lane; the next four fit in the lane and return at once.
        for n in 1...5 { await lane.post(Self.event(n), fanOut: fanOut) }
        #expect(seen.withLock { $0 }.isEmpty)
        #expect(lane.pending == 4)
        // The sixth would make five waiting: its poster waits for the fan-out.
        let returned = Flag()
        let poster = Task {
            await lane.post(Self.event(6), fanOut: fanOut)
            returned.set()
        }
        try await CancellableSleep.sleep(for: .milliseconds(200))
        #expect(!returned.isSet)
        release.yield()
        release.finish()
        await poster.value
        await lane.idle()
        #expect(returned.isSet)
        #expect(seen.withLock { $0 } == [1, 2, 3, 4, 5, 6])
        #expect(lane.pending == 0)
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    @Test func idleReturnsAtOnceWhenNothingWasPosted() async {
        await FanOutLane(limit: 1).idle()
    }
}
