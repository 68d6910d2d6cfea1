import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldTransit

/// The planner's threads go to the caller who used them least lately, and a full or slow
/// queue sheds searches instead of letting waits grow without bound.
@Suite struct PlannerPoolTests {
    /// A search that holds its thread until the test lets it go.
    final class Hold: Sendable {
        let started = Atomic(false)
        let release = DispatchSemaphore(value: 0)
        func run() {
            started.store(true, ordering: .releasing)
            release.wait()
        }
    }

    final class Log: Sendable {
        let items = Mutex<[String]>([])
        func append(_ item: String) { items.withLock { $0.append(item) } }
        var all: [String] { items.withLock { $0 } }
    }

    @Test func aCallerWhoUsedThePlannerLeastGoesFirst() async throws {
        let pool = PlannerPool(threads: 1, queueLimit: 100, maxWait: .seconds(600))
        let order = Log()
        let hold = Hold()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pool.run(client: "heavy") { hold.run() } }
            try await waitUntil("the first search holds the thread") { hold.started.load(ordering: .acquiring) }
            for index in 0..<5 {
                group.addTask { try await pool.run(client: "heavy") { order.append("heavy-\(index)") } }
            }
            try await waitUntil("five heavy searches wait") { pool.waiting == 5 }
            group.addTask { try await pool.run(client: "light") { order.append("light") } }
            try await waitUntil("the light search waits too") { pool.waiting == 6 }
            hold.release.signal()
            try await group.waitForAll()
        }
        // The heavy caller had used the thread (its held search); the light one had not.
        #expect(order.all.first == "light")
        #expect(order.all.count == 6)
    }

    @Test func aFullQueueAndALongWaitAreShed() async throws {
        let pool = PlannerPool(threads: 1, queueLimit: 2, maxWait: .milliseconds(50))
        let hold = Hold()
        let outcomes = Log()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pool.run(client: "a") { hold.run() } }
            try await waitUntil("the first search holds the thread") { hold.started.load(ordering: .acquiring) }
            for client in ["b", "c"] {
                group.addTask {
                    do {
                        try await pool.run(client: client) {}
                        outcomes.append("\(client) ran")
                    } catch is PlannerPool.Busy {
                        outcomes.append("\(client) shed")
                    }
                }
            }
            try await waitUntil("two searches wait") { pool.waiting == 2 }
            // The queue is full: the next is refused at once.
            await #expect(throws: PlannerPool.Busy.self) { try await pool.run(client: "d") {} }
            // Held past their 50 ms: shed when the thread frees.
            try await CancellableSleep.sleep(for: .milliseconds(100))
            hold.release.signal()
            try await group.waitForAll()
        }
        #expect(outcomes.all.sorted() == ["b shed", "c shed"])
        // And the pool serves again.
        #expect(try await pool.run(client: "e") { 42 } == 42)
    }
}
