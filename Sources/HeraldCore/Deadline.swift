/// The operation did not finish in time.
public struct DeadlineExceeded: Error, Sendable, Equatable {
    public init() {}
}

/// Runs `operation`, cancelling it and throwing `DeadlineExceeded` if it takes longer than
/// `timeout`.
///
/// Why everywhere outbound: a database that does not answer, or a push provider that stops
/// reading, must cost a bounded wait, never a hung worker.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, _ operation: @Sendable @escaping () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            // Not `Task.sleep`: its timer stays allocated until the deadline even when the
            // operation finished long before (721 bytes for the whole timeout, tens of MiB at
            // thousands of calls per second); an event-loop timer is freed when cancelled.
            try await CancellableSleep.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw DeadlineExceeded() }
        guard let value = first else { throw DeadlineExceeded() }
        return value
    }
}
