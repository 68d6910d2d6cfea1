import HeraldCore
import Synchronization
import Testing

@Suite struct StartupGateTests {
    @Test func waitersGoOnOnlyOnceTheGateOpens() async throws {
        let gate = StartupGate()
        let passed = Passed()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let opened = await gate.wait()
                    passed.count.add(1, ordering: .relaxed)
                    return opened
                }
            }
            // Closed: nobody passes, however long they wait (a loaded machine only delays them).
            try await Task.sleep(for: .milliseconds(100))
            #expect(passed.count.load(ordering: .relaxed) == 0 && !gate.opened)
            gate.open()
            var results: [Bool] = []
            for try await result in group { results.append(result) }
            #expect(results == [true, true, true] && gate.opened)
        }
        // An open gate lets a late waiter through at once.
        #expect(await gate.wait())
        #expect(await StartupGate(open: true).wait())
    }

    @Test func aCancelledWaiterGivesUpWithoutTheGateOpening() async {
        let gate = StartupGate()
        let waiter = Task { await gate.wait() }
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(!gate.opened)
    }
}

private final class Passed: Sendable {
    let count = Atomic<Int>(0)
}
