import Synchronization

/// Runs many callers' small database writes as one batch: the first caller to arrive while no
/// batch is being written writes everything queued so far (its own item included); callers
/// that arrive meanwhile queue, and when that batch is done the first of them writes the
/// next one, with everything queued by then. The others wait for their result.
///
/// Why: every statement goes through the database's single writer (SQLite) or a pool
/// connection, one round trip each. Five thousand clients disconnecting at once each saving
/// a session took seconds one by one and timed out (BENCHMARKS.md, realtime problem 2); as
/// a few multi-row statements they take milliseconds. Nothing runs detached: the batches
/// are written by the callers' own tasks.
///
/// Why each caller writes at most one batch: a request that led a batch and then went on
/// writing whatever queued meanwhile could, under steady load, write other callers' batches
/// for as long as the load lasted while its own answer waited (issue 37: sends are group
/// committed by the requests that make them). Passing the lead on keeps every caller's wait
/// to its own batch and the one before it. Cancelling the caller that is writing fails the
/// batch it is writing (its followers get the error too); the next batch is still written.
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
        if leads { await writeBatch() }
        while true {
            switch await slot.signal() {
            case .done(let result): return try result.get()
            case .lead: await writeBatch()
            }
        }
    }

    /// Writes the oldest queued items (this caller's among them), then hands the lead to the
    /// first caller still queued, or ends the writing when none is.
    private func writeBatch() async {
        let batch = state.withLock { state -> [(Item, Slot)] in
            let count = min(maxBatch, state.pending.count)
            let batch = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return batch
        }
        if !batch.isEmpty {
            do {
                let outputs = try await write(batch.map(\.0))
                guard outputs.count == batch.count else { throw GroupCommitError.outputCountMismatch }
                for (index, entry) in batch.enumerated() { entry.1.complete(.done(.success(outputs[index]))) }
            } catch {
                for entry in batch { entry.1.complete(.done(.failure(error))) }
            }
        }
        let next = state.withLock { state -> Slot? in
            guard let first = state.pending.first else {
                state.writing = false
                return nil
            }
            return first.1
        }
        next?.complete(.lead)
    }

    enum Signal: Sendable {
        /// The caller's item was written (or failed).
        case done(Result<Output, any Error>)
        /// The caller's item is first in the queue and nobody is writing: write the next batch.
        case lead
    }

    /// One caller's signal, which may arrive before or after the caller waits for it. A slot
    /// gets at most one `lead` and then one `done`, each taken by one wait.
    private final class Slot: Sendable {
        private let state = Mutex<(signals: [Signal], waiter: CheckedContinuation<Signal, Never>?)>(([], nil))

        func complete(_ signal: Signal) {
            let waiter = state.withLock { state -> CheckedContinuation<Signal, Never>? in
                guard let waiter = state.waiter else {
                    state.signals.append(signal)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: signal)
        }

        func signal() async -> Signal {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Signal? in
                    if !state.signals.isEmpty { return state.signals.removeFirst() }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

public enum GroupCommitError: Error, Equatable {
    /// A batch writer returned a different number of outputs than it was given items.
    case outputCountMismatch
}
