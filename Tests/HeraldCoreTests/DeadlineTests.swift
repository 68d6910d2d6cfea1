import HeraldCore
import Synchronization
import Testing

/// No upper bound on elapsed time anywhere here: the whole suite shares two cores, and a task
/// can wait tens of seconds for a thread on a loaded machine. What is asserted is what ended
/// each wait (a cancellation, not a timer that ran its course); a broken cancellation is a
/// sleep of an hour, which the time limit reports.
@Suite(.timeLimit(.minutes(10))) struct DeadlineTests {
    @Test func returnsTheValueWhenInTime() async throws {
        let value = try await withDeadline(.seconds(3600)) { 42 }
        #expect(value == 42)
    }

    @Test func cancelsAndThrowsWhenTooSlow() async throws {
        let ended = Mutex<String?>(nil)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(50)) {
                do {
                    try await CancellableSleep.sleep(for: .seconds(3600))
                    ended.withLock { $0 = "slept" }
                } catch {
                    ended.withLock { $0 = "cancelled" }
                    throw error
                }
                return 1
            }
        }
        // withDeadline returned, and its group awaits the operation: the operation was
        // cancelled, not waited out.
        #expect(ended.withLock { $0 } == "cancelled")
    }

    @Test func passesTheOperationsErrorThrough() async throws {
        struct Nope: Error {}
        await #expect(throws: Nope.self) { try await withDeadline(.seconds(3600)) { () async throws -> Int in throw Nope() } }
    }

    @Test func aCancellableSleepSleepsAtLeastItsDuration() async throws {
        let start = ContinuousClock.now
        try await CancellableSleep.sleep(for: .milliseconds(80))
        #expect(ContinuousClock.now - start >= .milliseconds(79))
    }

    @Test func cancellingACancellableSleepEndsItAtOnce() async throws {
        let sleeper = Task { try await CancellableSleep.sleep(for: .seconds(3600)) }
        try await CancellableSleep.sleep(for: .milliseconds(20))
        sleeper.cancel()
        // CancellationError, not a normal return: the cancellation ended the hour's sleep.
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // A task cancelled before it started sleeping ends too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await CancellableSleep.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test func manyConcurrentDeadlinesReturnTheirOwnValues() async throws {
        // (What each met deadline leaves allocated is measured by `PushLoad deadline-memory`.)
        for _ in 0..<2000 { _ = try await withDeadline(.seconds(3600)) { 1 } }
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 { group.addTask { try await withDeadline(.seconds(3600)) { index } } }
            return try await group.reduce(0, +)
        }
        #expect(values == (0..<200).reduce(0, +))
    }
}
