import Foundation
import HeraldCore
import Synchronization

/// How long a test waits for something that should happen.
///
/// Large on purpose: a wait ends as soon as its condition holds, so an idle machine never
/// spends it, while a loaded two-core machine (the whole suite runs its cases at once on two
/// cooperative threads, beside other work) delays anything by tens of seconds. A test that
/// waits for a condition fails only when the condition never comes; one with a short cap failed
/// whenever the machine was busy. `HERALD_TEST_PATIENCE_SECONDS` overrides it.
public enum Patience {
    public static let seconds: Int = {
        guard let text = ProcessInfo.processInfo.environment["HERALD_TEST_PATIENCE_SECONDS"], let value = Int(text), value > 0 else { return 600 }
        return value
    }()

    public static var limit: Duration { .seconds(seconds) }
}

/// A condition a test waited for did not come within `Patience.limit`.
public struct NeverHappened: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

// The probes are `@escaping`: with non-escaping probes that captured and assigned local
// variables, StripeFlowTests crashed under load (swift_retain of a bad pointer inside the
// probe, after a suspension). An escaping closure's context and the variables it captures
// are boxed on the heap; the crash has not been seen since.

/// Polls `probe` until it returns a value and returns that value; throws `NeverHappened`
/// (naming `what`) only after `timeout`. The sleeps between polls end at once when the test is
/// cancelled (a time limit).
@discardableResult
public func eventually<T>(
    _ what: String, timeout: Duration = Patience.limit, every interval: Duration = .milliseconds(20),
    _ probe: @escaping () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await probe() { return value }
        guard ContinuousClock.now < deadline else { throw NeverHappened("\(what): not within \(timeout)") }
        try await CancellableSleep.sleep(for: interval)
    }
}

/// Polls `condition` until it holds; throws `NeverHappened` (naming `what`) only after `timeout`.
public func waitUntil(
    _ what: String = "condition", timeout: Duration = Patience.limit, every interval: Duration = .milliseconds(20),
    _ condition: @escaping () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw NeverHappened("\(what): not within \(timeout)") }
        try await CancellableSleep.sleep(for: interval)
    }
}

/// A gate that tasks wait at until the test opens it: a stand-in for "a provider that stalls"
/// that lasts exactly as long as the test needs, where a fixed stall (30 s) could end before a
/// starved timer fired on a loaded machine. Any number of tasks may wait; once open it stays
/// open, and waits return at once.
public final class Gate: Sendable {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var isOpen: Bool { state.withLock { $0.open } }

    /// Returns once the gate is open.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let openNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if openNow { continuation.resume() }
        }
    }

    /// Opens the gate: every waiter goes on, and later waits return at once.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
