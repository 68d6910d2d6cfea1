import HeraldCore
import Logging
import ServiceLifecycleTestKit
import Synchronization
import Testing

/// The loop every periodic service runs: when rounds happen, that a failed round does not end
/// it, and how a graceful shutdown ends it. Intervals are long where only a shutdown or a
/// signal may end a wait, so nothing here depends on how fast a loaded machine runs.
@Suite struct PeriodicLoopTests {
    final class Rounds: Sendable {
        let count = Atomic<Int>(0)
        func next() -> Int { count.add(1, ordering: .relaxed).newValue }
        var value: Int { count.load(ordering: .relaxed) }
    }

    static let logger = Logger(label: "periodic-loop-test")

    /// Waits until `condition` holds, for up to ten minutes (it returns as soon as it holds; a
    /// loaded machine delays a round by seconds); the expectations after it say what was missing.
    static func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(600)
        while !condition(), ContinuousClock.now < deadline { try await CancellableSleep.sleep(for: .milliseconds(50)) }
    }

    /// A scheduler's loop runs at once, then on each signal; a round that throws is logged and
    /// the loop goes on; a shutdown ends the hour-long wait.
    @Test func runsAtOnceThenOnEachSignalAndOutlivesAFailedRound() async throws {
        let rounds = Rounds()
        let wake = WakeSignal()
        try await testGracefulShutdown { shutdown in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await PeriodicLoop.run(every: .seconds(3600), start: .immediately, wake: wake, logger: Self.logger, failure: "test round failed") {
                        if rounds.next() == 2 { throw TestFailure() }
                    }
                }
                try await Self.eventually { rounds.value == 1 }
                #expect(rounds.value == 1)
                wake.signal()
                try await Self.eventually { rounds.value == 2 }
                wake.signal()
                try await Self.eventually { rounds.value == 3 }
                #expect(rounds.value == 3, "the round after a failed one ran")
                shutdown.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(rounds.value == 3)
    }

    /// A round that hands a value on (a watermark) gets what the last round returned; one that
    /// throws leaves it as it was; the loop returns the last value at shutdown.
    @Test func carriesAValueFromRoundToRound() async throws {
        final class Seen: Sendable {
            let values = Mutex<[Int]>([])
            func append(_ value: Int) -> Int {
                values.withLock {
                    $0.append(value)
                    return $0.count
                }
            }
            var all: [Int] { values.withLock { $0 } }
        }
        let seen = Seen()
        let wake = WakeSignal()
        try await testGracefulShutdown { shutdown in
            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    await PeriodicLoop.run(
                        every: .seconds(3600), start: .immediately, wake: wake, logger: Self.logger, failure: "test round failed", carrying: 10
                    ) { value in
                        let round = seen.append(value)
                        if round == 2 { throw TestFailure() }
                        return value + 1
                    }
                }
                for count in 1...3 {
                    try await Self.eventually { seen.all.count == count }
                    if count < 3 { wake.signal() }
                }
                shutdown.triggerGracefulShutdown()
                #expect(try await group.next() == 12)
            }
        }
        #expect(seen.all == [10, 11, 11])
    }

    /// A janitor's loop waits one interval before its first round.
    @Test func afterIntervalWaitsBeforeTheFirstRound() async throws {
        let rounds = Rounds()
        try await testGracefulShutdown { shutdown in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await PeriodicLoop.run(every: .seconds(3600), start: .afterInterval) { _ = rounds.next() }
                }
                try await CancellableSleep.sleep(for: .milliseconds(300))
                #expect(rounds.value == 0)
                shutdown.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(rounds.value == 0)
    }

    /// A shutdown cancels a round in flight (a database that stopped answering must not hold
    /// the process), unless the round must finish what it started.
    @Test(arguments: [true, false])
    func aShutdownCancelsTheRoundInFlightUnlessItMustFinish(cancelling: Bool) async throws {
        let finished = Rounds()
        let started = Rounds()
        try await testGracefulShutdown { shutdown in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await PeriodicLoop.run(every: .seconds(3600), start: .immediately, cancellingRound: cancelling, logger: Self.logger, failure: "x") {
                        _ = started.next()
                        // An hour when the shutdown may cancel it; half a second when it must finish.
                        try await CancellableSleep.sleep(for: cancelling ? .seconds(3600) : .milliseconds(500))
                        _ = finished.next()
                    }
                }
                try await Self.eventually { started.value == 1 }
                shutdown.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        #expect(started.value == 1)
        #expect(finished.value == (cancelling ? 0 : 1))
    }

    struct TestFailure: Error {}
}
