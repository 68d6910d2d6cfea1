import SQLKit

/// A slot for a request's answer, filled inside the transaction that commits its work.
///
/// Why: a request retried with an `Idempotency-Key` must get its first answer, also when the
/// node died between the commit and storing that answer. If the answer is written by the
/// work's own transaction, there is no such moment: either both exist or neither.
///
/// Why a value handed down and not a task-local: the route that knows how to store an
/// answer (the server's idempotency layer) passes the slot to the one service call that
/// commits the work, and that call fills it just before its transaction ends. The wiring is
/// visible in both signatures; nothing in storage calls back into code it cannot see. A
/// slot whose recorder throws rolls the work back (the key was taken over by another node's
/// retry, which answers instead). Without a slot (`nil`) there is nothing to record.
public struct TransactionAnswer: Sendable {
    public typealias Recorder = @Sendable (any Sendable, any SQLDatabase) async throws -> Void

    let recorder: Recorder

    public init(_ recorder: @escaping Recorder) {
        self.recorder = recorder
    }

    /// Hands `result` to the slot's owner inside the transaction `db` belongs to.
    public func record(_ result: some Sendable, in db: any SQLDatabase) async throws {
        try await recorder(result, db)
    }
}
