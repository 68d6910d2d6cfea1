import HeraldCore
import Testing

/// Timeouts are long and upper bounds loose: under the full parallel suite a task may wait
/// seconds for a thread, so only "ended by the signal, long before the timeout" and "lasted
/// at least the timeout" are asserted.
@Suite struct WakeSignalTests {
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
        #expect(await Self.elapsed { await wake.wait(for: .seconds(60)) } < .seconds(30))
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
        #expect(await Self.elapsed { await wake.wait(for: .seconds(60)) } < .seconds(30))
        #expect(await Self.elapsed { await wake.wait(for: .milliseconds(300)) } >= .milliseconds(250))
    }

    /// A waiter is woken by a signal from another task.
    @Test func aWaiterIsWokenFromElsewhere() async {
        let wake = WakeSignal()
        async let waited = Self.elapsed { await wake.wait(for: .seconds(60)) }
        try? await CancellableSleep.sleep(for: .milliseconds(100))
        wake.signal()
        #expect(await waited < .seconds(30))
        #expect(await Self.elapsed { await wake.wait(for: .milliseconds(300)) } >= .milliseconds(250))
    }
}
