import HeraldCore
import Testing

@Suite struct DeadlineTests {
    @Test func returnsTheValueWhenInTime() async throws {
        let value = try await withDeadline(.seconds(5)) { 42 }
        #expect(value == 42)
    }

    @Test func cancelsAndThrowsWhenTooSlow() async throws {
        let start = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(50)) {
                try await CancellableSleep.sleep(for: .seconds(30))
                return 1
            }
        }
        // Well under the 30 s the operation would take (generous: the whole suite shares two cores).
        #expect(ContinuousClock.now - start < .seconds(25))
    }

    @Test func passesTheOperationsErrorThrough() async throws {
        struct Nope: Error {}
        await #expect(throws: Nope.self) { try await withDeadline(.seconds(5)) { () async throws -> Int in throw Nope() } }
    }

    @Test func aCancellableSleepSleepsAtLeastItsDuration() async throws {
        let start = ContinuousClock.now
        try await CancellableSleep.sleep(for: .milliseconds(80))
        #expect(ContinuousClock.now - start >= .milliseconds(79))
    }

    @Test func cancellingACancellableSleepEndsItAtOnce() async throws {
        let start = ContinuousClock.now
        let sleeper = Task { try await CancellableSleep.sleep(for: .seconds(60)) }
        try await CancellableSleep.sleep(for: .milliseconds(20))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // A task cancelled before it started sleeping ends too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await CancellableSleep.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(ContinuousClock.now - start < .seconds(30))
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
