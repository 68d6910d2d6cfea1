import SQLKit

/// Lets whoever called a piece of domain code keep a record of its result in the same
/// transaction that commits the work.
///
/// Why: a request retried with an `Idempotency-Key` must get its first answer, also when the
/// node died between the commit and storing that answer. If the answer is written by the
/// work's own transaction, there is no such moment: either both exist or neither. Domain code
/// calls `record(_:in:)` with its result just before its transaction ends; the caller (the
/// server's idempotency layer) installs a recorder for the result type it knows how to
/// answer. Without a recorder the call does nothing. A recorder that throws rolls the work
/// back (the key was taken over by another node's retry, which answers instead).
public enum TransactionAnswer {
    public typealias Recorder = @Sendable (any Sendable, any SQLDatabase) async throws -> Void

    @TaskLocal public static var recorder: Recorder?

    /// Hands `result` to the current recorder inside the transaction `db` belongs to. The
    /// result is only built when a recorder listens (most transactions have none).
    public static func record(_ result: @autoclosure () -> some Sendable, in db: any SQLDatabase) async throws {
        guard let recorder else { return }
        try await recorder(result(), db)
    }
}
