import Synchronization

/// Runs many callers' small database writes as one batch: the first caller to arrive while no
/// batch is being written writes everything queued so far (its own item included), then
/// whatever queued meanwhile, until nothing is left; the others wait for their result.
///
/// Why: every statement goes through the database's single writer (SQLite) or a pool
/// connection, one round trip each. Five thousand clients disconnecting at once each saving
/// a session took seconds one by one and timed out (BENCHMARKS.md, realtime problem 2); as
/// a few multi-row statements they take milliseconds. Nothing runs detached: the batches
/// are written by the callers' own tasks. Cancelling the caller that is writing fails the
/// batch it is writing (its followers get the error too).
public final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes one batch; returns one output per item, in order.
    public typealias Write = @Sendable ([Item]) async throws -> [Output]

    private struct State {
        var pending: [(Item, Slot)] = []
        var writing = false
    }

    private let state = Mutex(State())
    private let write: Write
    private let maxBatch: Int

    /// - Parameter maxBatch: items per `write` call at most (bound parameters per statement).
    public init(maxBatch: Int = 200, write: @escaping Write) {
        self.maxBatch = max(1, maxBatch)
        self.write = write
    }

    public func submit(_ item: Item) async throws -> Output {
        let slot = Slot()
        let leads = state.withLock { state in
            state.pending.append((item, slot))
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if leads { await writeUntilEmpty() }
        return try await slot.value()
    }

    private func writeUntilEmpty() async {
        while true {
            let batch = state.withLock { state -> [(Item, Slot)] in
                guard !state.pending.isEmpty else {
                    state.writing = false
                    return []
                }
                let count = min(maxBatch, state.pending.count)
                let batch = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let outputs = try await write(batch.map(\.0))
                guard outputs.count == batch.count else { throw GroupCommitError.outputCountMismatch }
                for (index, entry) in batch.enumerated() { entry.1.complete(.success(outputs[index])) }
            } catch {
                for entry in batch { entry.1.complete(.failure(error)) }
            }
        }
    }

    /// One caller's result, which may arrive before or after the caller waits for it.
    private final class Slot: Sendable {
        private let state = Mutex<(result: Result<Output, any Error>?, waiter: CheckedContinuation<Output, any Error>?)>((nil, nil))

        func complete(_ result: Result<Output, any Error>) {
            let waiter = state.withLock { state -> CheckedContinuation<Output, any Error>? in
                guard let waiter = state.waiter else {
                    state.result = result
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(with: result)
        }

        func value() async throws -> Output {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<Output, any Error>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}

public enum GroupCommitError: Error, Equatable {
    /// A batch writer returned a different number of outputs than it was given items.
    case outputCountMismatch
}
