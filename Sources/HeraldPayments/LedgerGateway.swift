import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// The default payment provider: holds kept in Herald's own database (`ledger_holds`), with
/// every authorisation, change, capture and release as an entry (`ledger_entries`).
///
/// Why a real book rather than a no-op: the whole adjustment flow (hold at booking, raise on
/// approval, trip-fee capture on decline, capture at completion) runs and can be audited with
/// no external service, and it enforces the same rules a card processor does — a captured or
/// released hold cannot change, a capture cannot exceed the hold — so the flow is tested
/// against those rules. Each call claims its idempotency key in the same transaction as the
/// change, so a retried call returns the first call's result instead of applying twice.
public struct LedgerGateway: PaymentGateway {
    let database: any Database
    let clock: any HeraldClock

    public init(database: any Database, clock: any HeraldClock) {
        self.database = database
        self.clock = clock
    }

    public var provider: String { "ledger" }

    public func authorize(_ request: HoldRequest) async throws -> HoldState {
        guard request.amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        let reference = Identifier.make("hold")
        return try await book(key: request.idempotencyKey, reference: reference, operation: "authorize", amount: request.amountMinor) { db, now in
            try await db.raw(
                """
                INSERT INTO ledger_holds (reference, job_id, customer_id, status, authorized_minor, amount_minor, captured_minor, currency,
                    payment_method, created_at, updated_at)
                VALUES (\(bind: reference), \(bind: request.jobID), \(bind: request.customerID), 'authorized', \(bind: request.amountMinor),
                    \(bind: request.amountMinor), 0, \(bind: request.currency), \(bind: request.paymentMethodID), \(bind: now), \(bind: now))
                """
            ).run()
            return HoldState(
                reference: reference, status: .authorized, authorizedMinor: request.amountMinor, amountMinor: request.amountMinor,
                capturedMinor: 0, currency: request.currency)
        }
    }

    /// The ledger keeps no reason: its events table already records every change.
    public func changeAmount(_ hold: HoldState, to amountMinor: Int64, reason: String, idempotencyKey: String) async throws -> HoldState {
        guard amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        return try await book(key: idempotencyKey, reference: hold.reference, operation: "change", amount: amountMinor) { db, now in
            let changed = try await db.raw(
                """
                UPDATE ledger_holds SET authorized_minor = \(bind: amountMinor), amount_minor = \(bind: amountMinor), updated_at = \(bind: now)
                WHERE reference = \(bind: hold.reference) AND status = 'authorized'
                RETURNING *
                """
            ).first(decoding: Row.self)
            if let changed { return changed.state }
            throw try await Self.refusal(db, hold.reference)
        }
    }

    public func capture(_ hold: HoldState, amountMinor: Int64, idempotencyKey: String) async throws -> HoldState {
        guard amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        return try await book(key: idempotencyKey, reference: hold.reference, operation: "capture", amount: amountMinor) { db, now in
            let captured = try await db.raw(
                """
                UPDATE ledger_holds SET status = 'captured', captured_minor = \(bind: amountMinor), amount_minor = \(bind: amountMinor),
                    updated_at = \(bind: now)
                WHERE reference = \(bind: hold.reference) AND status = 'authorized' AND authorized_minor >= \(bind: amountMinor)
                RETURNING *
                """
            ).first(decoding: Row.self)
            if let captured { return captured.state }
            if let row = try await Self.row(db, hold.reference), row.status == HoldStatus.authorized.rawValue {
                throw PaymentError(.invalid, "Cannot capture more than the hold (\(row.authorizedMinor)).")
            }
            throw try await Self.refusal(db, hold.reference)
        }
    }

    public func cancel(_ hold: HoldState, idempotencyKey: String) async throws -> HoldState {
        try await book(key: idempotencyKey, reference: hold.reference, operation: "cancel", amount: 0) { db, now in
            let cancelled = try await db.raw(
                """
                UPDATE ledger_holds SET status = 'cancelled', amount_minor = 0, updated_at = \(bind: now)
                WHERE reference = \(bind: hold.reference) AND status = 'authorized'
                RETURNING *
                """
            ).first(decoding: Row.self)
            if let cancelled { return cancelled.state }
            if let row = try await Self.row(db, hold.reference), row.status == HoldStatus.cancelled.rawValue { return row.state }
            throw try await Self.refusal(db, hold.reference)
        }
    }

    /// The hold as the ledger has it (tests and operators compare it with Herald's view).
    public func hold(_ reference: String) async throws -> HoldState? {
        try await database.withConnection { db in try await Self.row(db, reference)?.state }
    }

    /// The ledger's entries for a hold, oldest first: `(operation, amount_minor)`.
    public func entries(_ reference: String) async throws -> [(operation: String, amountMinor: Int64)] {
        try await database.withConnection { db in
            try await db.raw("SELECT operation, amount_minor FROM ledger_entries WHERE reference = \(bind: reference) ORDER BY created_at, id").all()
                .map { (try $0.decode(column: "operation", as: String.self), try $0.decode(column: "amount_minor", as: Int64.self)) }
        }
    }

    // MARK: Booking an entry

    /// Runs `apply` and records its result under `key`, in one transaction; a key seen before
    /// returns the recorded result without applying again.
    private func book(
        key: String, reference: String, operation: String, amount: Int64,
        _ apply: @escaping @Sendable (any SQLDatabase, Int64) async throws -> HoldState
    ) async throws -> HoldState {
        let now = clock.now().epochMilliseconds
        let entryID = Identifier.make("led")
        let outcome = try await database.transaction { db -> HoldState? in
            // Claiming the key first: a concurrent call with the same key waits here (PostgreSQL)
            // or runs after this transaction (SQLite), then finds the result.
            let claimed = try await db.raw(
                """
                INSERT INTO ledger_entries (id, reference, operation, amount_minor, idempotency_key, result, created_at)
                VALUES (\(bind: entryID), \(bind: reference), \(bind: operation), \(bind: amount), \(bind: key), '', \(bind: now))
                ON CONFLICT (idempotency_key) DO NOTHING
                RETURNING id
                """
            ).first()
            guard claimed != nil else { return nil }
            let state = try await apply(db, now)
            try await db.raw("UPDATE ledger_entries SET result = \(bind: try Self.encode(state)) WHERE id = \(bind: entryID)").run()
            return state
        }
        if let outcome { return outcome }
        let stored = try await database.withConnection { db in
            try await db.raw("SELECT operation, result FROM ledger_entries WHERE idempotency_key = \(bind: key)").first()
                .map { (try $0.decode(column: "operation", as: String.self), try $0.decode(column: "result", as: String.self)) }
        }
        guard let (storedOperation, result) = stored, storedOperation == operation,
            let state = try? JSONDecoder().decode(HoldState.self, from: Data(result.utf8))
        else {
            throw PaymentError(.invalid, "The idempotency key was used for a different request.")
        }
        return state
    }

    static func encode(_ state: HoldState) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(state), as: UTF8.self)
    }

    static func row(_ db: any SQLDatabase, _ reference: String) async throws -> Row? {
        try await db.raw("SELECT * FROM ledger_holds WHERE reference = \(bind: reference)").first(decoding: Row.self)
    }

    /// Why a conditional update matched nothing: the hold is closed, or it does not exist.
    static func refusal(_ db: any SQLDatabase, _ reference: String) async throws -> PaymentError {
        guard let row = try await row(db, reference) else { return PaymentError(.invalid, "No such payment hold.") }
        return PaymentError(.holdClosed, "The payment was already \(row.status == "captured" ? "captured" : "released").", providerCode: row.status)
    }

    struct Row: Codable {
        var reference: String
        var status: String
        var authorizedMinor: Int64
        var amountMinor: Int64
        var capturedMinor: Int64
        var currency: String

        enum CodingKeys: String, CodingKey {
            case reference, status, currency
            case authorizedMinor = "authorized_minor"
            case amountMinor = "amount_minor"
            case capturedMinor = "captured_minor"
        }

        var state: HoldState {
            HoldState(
                reference: reference, status: HoldStatus(rawValue: status) ?? .cancelled, authorizedMinor: authorizedMinor, amountMinor: amountMinor,
                capturedMinor: capturedMinor, currency: currency)
        }
    }
}
