import Synchronization

/// Shuts down what a test started, on every path out of it.
///
/// Why one helper: a test that started an HTTP client and a mock server, then threw (one slow
/// request on a loaded machine), left its `do` block without shutting the client down, and
/// async-http-client's deinit check killed the whole test process: one failure became every
/// test's failure. Register each thing right after starting it; `withTeardown` stops them
/// in reverse order whether the body returns or throws, then rethrows the body's error.
public final class Teardown: Sendable {
    public typealias Step = @Sendable () async throws -> Void
    private let steps = Mutex<[(String, Step)]>([])

    init() {}

    /// Runs `step` when the test ends (after the steps registered later).
    public func add(_ name: String, _ step: @escaping Step) {
        steps.withLock { $0.append((name, step)) }
    }

    /// Runs every step, newest first; returns the failures (each step runs regardless).
    func run() async -> [String] {
        let all = steps.withLock { steps in
            defer { steps.removeAll() }
            return steps
        }
        var failures: [String] = []
        for (name, step) in all.reversed() {
            do { try await step() } catch { failures.append("\(name): \(error)") }
        }
        return failures
    }
}

/// A teardown step failed (reported after the body's own error, if any).
public struct TeardownFailed: Error, CustomStringConvertible {
    public let failures: [String]
    public var description: String { "teardown failed: " + failures.joined(separator: "; ") }
}

/// Runs `body` with a `Teardown`; everything registered on it is stopped on every path.
public func withTeardown<T: Sendable>(_ body: (Teardown) async throws -> T) async throws -> T {
    let teardown = Teardown()
    let result: Result<T, any Error>
    do {
        result = .success(try await body(teardown))
    } catch {
        result = .failure(error)
    }
    let failures = await teardown.run()
    let value = try result.get()
    if !failures.isEmpty { throw TeardownFailed(failures: failures) }
    return value
}
