import HeraldCore
import Synchronization
import Testing

/// No upper bound on elapsed time: under the full parallel suite on a loaded machine a task
/// may wait tens of seconds for a thread. A wait "ended by the signal" is a wait with an hour's
/// timeout that returned (a lost signal is a hang, which the time limit reports); "lasted at
/// least the timeout" is a lower bound, which load cannot break.
@Suite(.timeLimit(.minutes(10))) struct WakeSignalTests {
    static func elapsed(_ body: () async -> Void) async -> Duration {
        let start = ContinuousClock.now
        await body()
        return ContinuousClock.now - start
    }

    /// A signal ends the wait; afterwards, with nothing signalled, waits last their timeout
    /// again (a regression: every wait after the first signal returned at once, so each
    /// polling loop spun on a core).
    @Test func aSignalEndsOneWaitAndLaterWaitsSleepAgain() async {
        let wake = WakeSignal()
        wake.signal()
        await wake.wait(for: .seconds(3600))  // returns only because of the signal
        for _ in 0..<3 {
            #expect(await Self.elapsed { await wake.wait(for: .milliseconds(300)) } >= .milliseconds(250))
        }
    }

    /// A signal while nobody waits is kept for the next wait; several count as one.
    @Test func aSignalBetweenWaitsIsKeptOnce() async {
        let wake = WakeSignal()
        await wake.wait(for: .milliseconds(50))
        wake.signal()
        wake.signal()
        await wake.wait(for: .seconds(3600))  // returns only because of the kept signal
        #expect(await Self.elapsed { await wake.wait(for: .milliseconds(300)) } >= .milliseconds(250))
    }

    /// A waiter is woken by a signal from another task.
    @Test func aWaiterIsWokenFromElsewhere() async {
        let wake = WakeSignal()
        let returned = Flag()
        let waiter = Task {
            await wake.wait(for: .seconds(3600))
            returned.set()
        }
        try? await CancellableSleep.sleep(for: .milliseconds(100))
        // Nothing was signalled yet, so the hour's wait is still on (a wait that returned
        // early would show here; a late check only misses it, never fails wrongly).
        #expect(!returned.isSet)
        wake.signal()
        await waiter.value  // woken by the signal (else: the time limit)
        #expect(returned.isSet)
        #expect(await Self.elapsed { await wake.wait(for: .milliseconds(300)) } >= .milliseconds(250))
    }

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }
}
