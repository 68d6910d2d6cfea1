import HeraldIdempotency
import HeraldStorage
import Hummingbird
import Synchronization

/// The `Idempotency-Key` a request owns while its handler runs, so the handler can store its
/// answer in the same transaction as its work (`answer(_:respond:work:)`).
///
/// Why: with the answer stored after the work's commit, a node that died in between left a
/// pending key and committed work; the retry took the key over once the lock timed out and
/// ran the work again (a second notification, a second push). Routes whose work would be
/// repeated by a re-run (a send, a booking) answer inside their transaction; the rest are
/// upserts or state transitions that a re-run leaves as they are.
final class IdempotencyClaim: Sendable {
    @TaskLocal static var current: IdempotencyClaim?

    let scope: String
    let key: String
    let lockedAt: Int64
    private let answered = Mutex(false)

    init(scope: String, key: String, lockedAt: Int64) {
        self.scope = scope
        self.key = key
        self.lockedAt = lockedAt
    }

    /// True once a transaction committed this request's answer with its work.
    var answeredWithWork: Bool { answered.withLock { $0 } }

    func markAnswered() { answered.withLock { $0 = true } }
}

/// Thrown inside a work transaction whose key a retry took over: the work rolls back and the
/// request answers with whatever the new owner stored.
struct IdempotencyKeyTakenOver: Error {}

/// Runs a route's work so that, when the request holds an `Idempotency-Key`, the answer is
/// stored by the same transaction that commits the work.
enum IdempotentAnswer {
    /// `work` gets the answer's slot (nil without a key) and must hand it to the service call
    /// that commits the work, which fills it with its result of type `R` inside its
    /// transaction; `respond` builds the route's response from that result (called inside
    /// the transaction, so it must not do I/O). Without a key this is `respond(work(nil))`.
    static func answer<R: Sendable>(
        _ type: R.Type, respond: @escaping @Sendable (R) throws -> Response, work: (TransactionAnswer?) async throws -> R
    ) async throws -> Response {
        guard let claim = IdempotencyClaim.current else { return try respond(try await work(nil)) }
        let recorded = Mutex<Response?>(nil)
        let store = IdempotencyStore()
        let slot = TransactionAnswer { result, db in
            guard let result = result as? R else { return }
            let (response, stored) = try await IdempotencyMiddleware.collect(try respond(result))
            guard try await store.complete(db, scope: claim.scope, key: claim.key, lockedAt: claim.lockedAt, response: stored) else {
                throw IdempotencyKeyTakenOver()
            }
            recorded.withLock { $0 = response }
        }
        let result = try await work(slot)
        guard let response = recorded.withLock({ $0 }) else { return try respond(result) }
        claim.markAnswered()
        return response
    }
}
