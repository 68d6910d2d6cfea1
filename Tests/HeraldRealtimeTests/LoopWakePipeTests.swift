import HeraldTestSupport
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization
import Testing

@testable import HeraldRealtime

/// The pipe an event loop watches so that the write scheduler's next chunk follows the loop's
/// next look at I/O.
@Suite struct LoopWakePipeTests {
    final class Wakes: Sendable {
        let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    @Test func anEmbeddedLoopHasNoPipeSoTheSchedulerKeepsItsTimer() throws {
        let loop = EmbeddedEventLoop()
        let opened = try LoopWakePipe.open(on: loop) {}.wait()
        #expect(opened == nil)
    }

    @Test func eachWakeIsReadByTheLoopOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let wakes = Wakes()
        let opened = try await LoopWakePipe.open(on: loop) { wakes.add() }.get()
        let pipe = try #require(opened)
        #expect(try await loop.submit { pipe.value.wake() }.get())
        try await waitUntil("the loop read the first wake") { wakes.value == 1 }
        #expect(try await loop.submit { pipe.value.wake() }.get())
        try await waitUntil("the loop read the second wake") { wakes.value == 2 }
        try await group.shutdownGracefully()
        #expect(wakes.value == 2)
    }
}
