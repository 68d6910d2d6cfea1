import Foundation
import HeraldCore
import HeraldPayments
import SQLKit

/// Payment holds and the audit of every provider call.
///
/// Why the owed call is a column: a decision (decline, completion, cancel) commits together
/// with the provider call it implies; the call is made right after, and if the provider is
/// down or the process dies, the scheduler makes it later with the same idempotency key.
/// A newer decision replaces an older unconfirmed one (a capture supersedes a change).
struct HoldStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, jobID: String, provider: String, _ state: HoldState, now: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO payment_holds (job_id, provider, reference, status, authorized_minor, amount_minor, captured_minor, currency,
                attempts, created_at, updated_at)
            VALUES (\(bind: jobID), \(bind: provider), \(bind: state.reference), \(bind: state.status.rawValue), \(bind: state.authorizedMinor),
                \(bind: state.amountMinor), \(bind: state.capturedMinor), \(bind: state.currency), 0, \(bind: now), \(bind: now))
            """
        ).run()
    }

    /// A hold to take at `holdAt` (see `HoldTiming`): no provider record yet, the owed call is
    /// its authorisation, which the payment scheduler makes when it is due.
    func insertScheduled(
        _ db: any SQLDatabase, jobID: String, provider: String, amountMinor: Int64, currency: String, paymentMethod: String?, customerID: String,
        holdAt: Int64, now: Int64
    ) async throws {
        try await db.raw(
            """
            INSERT INTO payment_holds (job_id, provider, reference, status, authorized_minor, amount_minor, captured_minor, currency,
                pending_op, pending_amount_minor, attempts, next_attempt_at, payment_method, customer_id, created_at, updated_at)
            VALUES (\(bind: jobID), \(bind: provider), '', \(bind: HoldRecord.Status.scheduled.rawValue), 0, \(bind: amountMinor), 0, \(bind: currency),
                \(bind: HoldOperation.authorize(amountMinor).name), \(bind: amountMinor), 0, \(bind: holdAt), \(bind: paymentMethod),
                \(bind: customerID), \(bind: now), \(bind: now))
            """
        ).run()
    }

    /// A scheduled hold was taken: the provider's record replaces the schedule, and the owed
    /// call is cleared if it was the authorisation itself (a newer decision stays owed).
    func taken(_ db: any SQLDatabase, jobID: String, _ state: HoldState, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE payment_holds SET reference = \(bind: state.reference), status = \(bind: state.status.rawValue),
                authorized_minor = \(bind: state.authorizedMinor), amount_minor = \(bind: state.amountMinor),
                captured_minor = \(bind: state.capturedMinor), payment_method = NULL, updated_at = \(bind: now),
                next_attempt_at = CASE WHEN pending_op = 'authorize' THEN NULL ELSE next_attempt_at END,
                pending_amount_minor = CASE WHEN pending_op = 'authorize' THEN NULL ELSE pending_amount_minor END,
                pending_op = CASE WHEN pending_op = 'authorize' THEN NULL ELSE pending_op END
            WHERE job_id = \(bind: jobID) AND status = \(bind: HoldRecord.Status.scheduled.rawValue)
            """
        ).run()
    }

    /// Makes a scheduled hold due now (the driver set off before its time).
    func takeNow(_ db: any SQLDatabase, jobID: String, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE payment_holds SET next_attempt_at = \(bind: now), updated_at = \(bind: now)
            WHERE job_id = \(bind: jobID) AND status = \(bind: HoldRecord.Status.scheduled.rawValue) AND pending_op = 'authorize' AND next_attempt_at > \(bind: now)
            RETURNING job_id
            """
        ).first() != nil
    }

    func find(_ db: any SQLDatabase, jobID: String) async throws -> HoldRecord? {
        try await db.raw("SELECT * FROM payment_holds WHERE job_id = \(bind: jobID)").first(decoding: HoldRecord.self)
    }

    /// How long the request that made a decision has to make its call before the scheduler
    /// takes over (it only does when that request's node died or the call failed).
    static let requestGrace: Int64 = 15_000

    /// Records that `operation` is owed, replacing any older owed call; the deciding request
    /// makes it right after commit, the scheduler after `requestGrace` if it did not.
    func plan(_ db: any SQLDatabase, jobID: String, _ operation: HoldOperation, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE payment_holds SET pending_op = \(bind: operation.name), pending_amount_minor = \(bind: operation.amount), attempts = 0,
                next_attempt_at = \(bind: now + Self.requestGrace), last_error = NULL, updated_at = \(bind: now)
            WHERE job_id = \(bind: jobID)
            """
        ).run()
    }

    /// Stores what the provider answered; clears the owed call if it is still `operation`
    /// (a newer decision made meanwhile stays owed).
    func applied(_ db: any SQLDatabase, jobID: String, _ state: HoldState, settling operation: HoldOperation?, now: Int64) async throws {
        var query = SQLQueryString(
            """
            UPDATE payment_holds SET reference = \(bind: state.reference), status = \(bind: state.status.rawValue), authorized_minor = \(bind: state.authorizedMinor),
                amount_minor = \(bind: state.amountMinor), captured_minor = \(bind: state.capturedMinor), updated_at = \(bind: now)
            """)
        if let operation {
            query += """
                , pending_op = CASE WHEN pending_op = \(bind: operation.name) AND COALESCE(pending_amount_minor, -1) = \(bind: operation.amount ?? -1)
                    THEN NULL ELSE pending_op END,
                next_attempt_at = CASE WHEN pending_op = \(bind: operation.name) AND COALESCE(pending_amount_minor, -1) = \(bind: operation.amount ?? -1)
                    THEN NULL ELSE next_attempt_at END,
                last_error = NULL
                """
        }
        query += " WHERE job_id = \(bind: jobID)"
        try await db.raw(query).run()
    }

    /// A failed attempt: retried at `retryAt`, or given up (nil) with the reason kept for operators.
    func failed(_ db: any SQLDatabase, jobID: String, _ operation: HoldOperation, error: String, retryAt: Int64?, now: Int64) async throws {
        var query = SQLQueryString("UPDATE payment_holds SET attempts = attempts + 1, last_error = \(bind: error), updated_at = \(bind: now), ")
        if let retryAt {
            query += "next_attempt_at = \(bind: retryAt)"
        } else {
            query += "next_attempt_at = NULL, pending_op = NULL, pending_amount_minor = NULL"
        }
        query += """
             WHERE job_id = \(bind: jobID) AND pending_op = \(bind: operation.name)
                AND COALESCE(pending_amount_minor, -1) = \(bind: operation.amount ?? -1)
            """
        try await db.raw(query).run()
    }

    /// Leases the job's owed call for the request that just planned it (nil: none, or the
    /// scheduler or another request has it leased).
    func claim(_ db: any SQLDatabase, jobID: String, now: Int64, lease: Int64) async throws -> HoldRecord? {
        try await db.raw(
            """
            UPDATE payment_holds SET next_attempt_at = \(bind: now + lease)
            WHERE job_id = \(bind: jobID) AND pending_op IS NOT NULL AND next_attempt_at <= \(bind: now + Self.requestGrace)
            RETURNING *
            """
        ).first(decoding: HoldRecord.self)
    }

    /// Owed calls that are due, leased for `lease` so another node does not make them at the
    /// same time (a double call would be harmless — same idempotency key — but wasteful).
    func claimDue(_ db: any SQLDatabase, now: Int64, lease: Int64, limit: Int) async throws -> [HoldRecord] {
        let due = try await db.raw(
            """
            SELECT * FROM payment_holds WHERE pending_op IS NOT NULL AND next_attempt_at <= \(bind: now)
            ORDER BY next_attempt_at LIMIT \(bind: limit)
            """
        ).all(decoding: HoldRecord.self)
        var claimed: [HoldRecord] = []
        for hold in due {
            let won = try await db.raw(
                """
                UPDATE payment_holds SET next_attempt_at = \(bind: now + lease)
                WHERE job_id = \(bind: hold.jobID) AND next_attempt_at = \(bind: hold.nextAttemptAt)
                RETURNING job_id
                """
            ).first()
            if won != nil { claimed.append(hold) }
        }
        return claimed
    }

    func recordEvent(
        _ db: any SQLDatabase, jobID: String, provider: String, operation: String, amount: Int64?, outcome: PaymentCallOutcome, errorCode: String?,
        key: String, now: Int64
    ) async throws {
        try await db.raw(
            """
            INSERT INTO payment_events (id, job_id, provider, operation, amount_minor, outcome, error_code, idempotency_key, created_at)
            VALUES (\(bind: Identifier.make("pev")), \(bind: jobID), \(bind: provider), \(bind: operation), \(bind: amount), \(bind: outcome.rawValue),
                \(bind: errorCode), \(bind: key), \(bind: now))
            """
        ).run()
    }

    func countEvents(_ db: any SQLDatabase, jobID: String, operation: String, amount: Int64, outcome: PaymentCallOutcome) async throws -> Int {
        try await db.raw(
            """
            SELECT COUNT(*) AS n FROM payment_events
            WHERE job_id = \(bind: jobID) AND operation = \(bind: operation) AND amount_minor = \(bind: amount) AND outcome = \(bind: outcome.rawValue)
            """
        ).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    func events(_ db: any SQLDatabase, jobID: String) async throws -> [PaymentEventRecord] {
        try await db.raw("SELECT * FROM payment_events WHERE job_id = \(bind: jobID) ORDER BY created_at, id").all(decoding: PaymentEventRecord.self)
    }
}
