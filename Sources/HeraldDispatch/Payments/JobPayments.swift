import Foundation
import HeraldCore
import HeraldPayments
import HeraldStorage
import Logging
import SQLKit

/// A job's money: the hold taken at booking, the provider calls that job decisions imply, and
/// their retries.
///
/// Why decisions first and provider calls after: a decision (approve, decline, complete,
/// cancel) is one conditional database update that exactly one request wins; the provider
/// call it implies is written with it (`HoldStore.plan`) and made right after commit with an
/// idempotency key derived from the decision, and retried with backoff by the scheduler if the
/// provider is down — so the job and the payment always end up agreeing. The one call made
/// before its decision is raising a hold for an approved higher price: if the card refuses,
/// the customer must hear it before the price counts.
public final class JobPayments: Sendable {
    public let gateway: any PaymentGateway
    let database: any Database
    let clock: any HeraldClock
    let logger: Logger
    let holds = HoldStore()
    /// When jobs booked ahead take their hold.
    public let timing: HoldTiming
    /// Retries stop after this many attempts (about a day with the backoff below).
    static let maxAttempts = 30
    /// How long a caller owns an owed call it is making (then another may retry it).
    static let lease: Int64 = 60_000

    public init(gateway: any PaymentGateway, database: any Database, clock: any HeraldClock, logger: Logger, timing: HoldTiming) {
        self.gateway = gateway
        self.timing = timing
        self.database = database
        self.clock = clock
        self.logger = logger
    }

    var now: Int64 { clock.now().epochMilliseconds }

    /// Takes the hold for a new job (before the job is stored: no hold, no job).
    func authorize(jobID: String, customerID: String, amountMinor: Int64, currency: String, paymentMethodID: String?) async throws -> HoldState {
        let key = "\(jobID):authorize"
        do {
            let state = try await gateway.authorize(
                HoldRequest(
                    jobID: jobID, customerID: customerID, amountMinor: amountMinor, currency: currency, paymentMethodID: paymentMethodID, idempotencyKey: key))
            await record(jobID: jobID, operation: "authorize", amount: amountMinor, error: nil, key: key)
            return state
        } catch let error as PaymentError {
            await record(jobID: jobID, operation: "authorize", amount: amountMinor, error: error, key: key)
            throw Self.clientError(error)
        }
    }

    /// Releases a hold whose job could not be stored (best effort; logged).
    func release(_ state: HoldState, jobID: String) async {
        do {
            _ = try await gateway.cancel(state, idempotencyKey: HoldOperation.cancel.idempotencyKey(jobID: jobID))
        } catch {
            logger.error("releasing an orphaned payment hold failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Raises (or lowers) the hold now, before the decision that needs it.
    ///
    /// The key is the decision's, so a double tap or a retry after a timeout is one raise; but
    /// after a refusal (the card declined) the next try gets a new key — the provider would
    /// otherwise answer it with the stored refusal even once the customer's bank would agree.
    func change(jobID: String, hold: HoldRecord, to amountMinor: Int64) async throws -> HoldState {
        if hold.isScheduled {
            // Not taken yet: the customer approving in the app is there to authorise it.
            let key = try await attemptKey(jobID, .authorize(amountMinor))
            do {
                return try await take(hold, amountMinor: amountMinor, offSession: false, key: key)
            } catch let error as PaymentError {
                await record(jobID: jobID, operation: "authorize", amount: amountMinor, error: error, key: key)
                throw Self.clientError(error)
            }
        }
        let operation = HoldOperation.change(amountMinor)
        let key = try await attemptKey(jobID, operation)
        do {
            let state = try await gateway.changeAmount(hold.state, to: amountMinor, reason: Self.reason(hold.state, amountMinor), idempotencyKey: key)
            if state.reference != hold.reference {
                // A re-authorisation: the old hold is gone, so the new one is stored now,
                // whatever the decision waiting for it turns out to be.
                let now = self.now
                try await database.withConnection { db in try await self.holds.applied(db, jobID: jobID, state, settling: nil, now: now) }
            }
            await record(jobID: jobID, operation: operation.name, amount: amountMinor, error: nil, key: key)
            return state
        } catch let error as PaymentError {
            await record(jobID: jobID, operation: operation.name, amount: amountMinor, error: error, key: key)
            throw Self.clientError(error)
        }
    }

    /// How an owed call ended.
    public enum Settled: Sendable {
        /// Nothing was owed (or another caller has it).
        case nothing
        case done
        /// Failed; retried later, or given up and left to operators.
        case failed
        /// A scheduled hold could not be taken: the card refused it (the job cannot be paid).
        case holdRefused(PaymentError)
    }

    /// Makes the provider call owed for `jobID`, if any (leased first, so the scheduler does
    /// not make it at the same time); failures are kept for a retry.
    @discardableResult
    func settle(_ jobID: String) async -> Settled {
        let now = self.now
        do {
            guard let hold = try await database.withConnection({ db in try await self.holds.claim(db, jobID: jobID, now: now, lease: Self.lease) }) else {
                return .nothing
            }
            return await settle(hold)
        } catch {
            logger.warning("reading a payment hold failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
            return .failed
        }
    }

    /// Makes a scheduled hold due now (the job's driver set off before the hold's time) and
    /// takes it.
    func takeScheduledNow(_ jobID: String) async -> Settled {
        let now = self.now
        do {
            guard try await database.withConnection({ db in try await self.holds.takeNow(db, jobID: jobID, now: now) }) else { return .nothing }
        } catch {
            logger.warning("bringing a scheduled payment hold forward failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
            return .failed
        }
        return await settle(jobID)
    }

    /// Takes a scheduled hold for `amountMinor` with the booking's key and stores it at once,
    /// so whatever call follows works on the real hold (and a retry finds it taken).
    /// The decision's key for a call made before its decision (a raise, taking a scheduled
    /// hold); after a refusal a new one, since the provider would replay the stored refusal
    /// even once the customer's bank would agree.
    private func attemptKey(_ jobID: String, _ operation: HoldOperation) async throws -> String {
        let refusals = try await database.withConnection { db in
            try await self.holds.countEvents(db, jobID: jobID, operation: operation.name, amount: operation.amount ?? 0, outcome: .failed)
        }
        return operation.idempotencyKey(jobID: jobID) + (refusals > 0 ? ":\(refusals)" : "")
    }

    private func take(_ hold: HoldRecord, amountMinor: Int64, offSession: Bool, key: String) async throws -> HoldState {
        do {
            let state = try await gateway.authorize(
                HoldRequest(
                    jobID: hold.jobID, customerID: hold.customerID ?? "", amountMinor: amountMinor, currency: hold.currency,
                    paymentMethodID: hold.paymentMethod, idempotencyKey: key, offSession: offSession))
            let now = self.now
            try await database.transaction { db in
                try await self.holds.taken(db, jobID: hold.jobID, state, now: now)
                try await self.holds.recordEvent(
                    db, jobID: hold.jobID, provider: self.gateway.provider, operation: "authorize", amount: amountMinor, outcome: .ok,
                    errorCode: nil, key: key, now: now)
            }
            logger.info("scheduled payment hold taken", metadata: ["job_id": "\(hold.jobID)", "amount_minor": "\(amountMinor)"])
            return state
        }
    }

    func settle(_ hold: HoldRecord) async -> Settled {
        guard let operation = HoldOperation(name: hold.pendingOp, amount: hold.pendingAmountMinor) else { return .nothing }
        let key = operation.idempotencyKey(jobID: hold.jobID)
        let now = self.now
        var refused: PaymentError?
        do {
            var current = hold.state
            if hold.isScheduled {
                guard let amount = operation.amount else {
                    // Released before it was taken: there is nothing at the provider to release.
                    let released = HoldState(
                        reference: hold.reference, status: .cancelled, authorizedMinor: 0, amountMinor: 0, capturedMinor: 0, currency: hold.currency)
                    try await database.withConnection { db in try await self.holds.applied(db, jobID: hold.jobID, released, settling: operation, now: now) }
                    return .done
                }
                do {
                    current = try await take(hold, amountMinor: amount, offSession: true, key: try await attemptKey(hold.jobID, .authorize(amount)))
                } catch let error as PaymentError where !error.isRetryable {
                    refused = error
                    throw error
                }
            }
            let state: HoldState
            switch operation {
            case .authorize: state = current
            case .change(let amount):
                state =
                    current.amountMinor == amount
                    ? current : try await gateway.changeAmount(current, to: amount, reason: Self.reason(current, amount), idempotencyKey: key)
            case .capture(let amount): state = try await gateway.capture(current, amountMinor: min(amount, current.authorizedMinor), idempotencyKey: key)
            case .cancel: state = try await gateway.cancel(current, idempotencyKey: key)
            }
            try await database.transaction { db in
                try await self.holds.applied(db, jobID: hold.jobID, state, settling: operation, now: now)
                if case .authorize = operation { return }  // `take` recorded it
                try await self.holds.recordEvent(
                    db, jobID: hold.jobID, provider: self.gateway.provider, operation: operation.name, amount: operation.amount, outcome: .ok,
                    errorCode: nil, key: key, now: now)
            }
            return .done
        } catch {
            let paymentError = error as? PaymentError
            let wasReplaced = await replaced(hold, closedBy: paymentError)
            let retryable = (paymentError?.isRetryable ?? true) || wasReplaced
            let attempts = hold.attempts + 1
            let retryAt = retryable && attempts < Self.maxAttempts ? now + Self.backoffMilliseconds(attempt: attempts) : nil
            let code = paymentError?.code ?? "error"
            let metadata: Logger.Metadata = ["job_id": "\(hold.jobID)", "operation": "\(operation.name)", "code": "\(code)", "attempt": "\(attempts)"]
            if retryAt == nil {
                logger.error("payment call failed; giving up", metadata: metadata)
            } else {
                logger.warning("payment call failed; will retry", metadata: metadata)
            }
            do {
                try await database.transaction { db in
                    try await self.holds.failed(db, jobID: hold.jobID, operation, error: code, retryAt: retryAt, now: now)
                    try await self.holds.recordEvent(
                        db, jobID: hold.jobID, provider: self.gateway.provider, operation: operation.name, amount: operation.amount,
                        outcome: retryAt == nil ? .failed : .retry, errorCode: code, key: key, now: now)
                }
            } catch {
                logger.warning("recording a payment failure failed", metadata: ["job_id": "\(hold.jobID)", "error": "\(String(reflecting: error))"])
            }
            return refused.map(Settled.holdRefused) ?? .failed
        }
    }

    /// The price-adjustment design's `reason` on the provider's record of an amount change.
    static func reason(_ hold: HoldState, _ amountMinor: Int64) -> String {
        amountMinor > hold.amountMinor ? "volume_increase" : "volume_decrease"
    }

    /// A hold found closed because a re-authorisation replaced it meanwhile: the call is
    /// retried (on the new hold), not given up.
    private func replaced(_ hold: HoldRecord, closedBy error: PaymentError?) async -> Bool {
        guard error?.kind == .holdClosed else { return false }
        let current = try? await database.withConnection { db in try await self.holds.find(db, jobID: hold.jobID) }
        return current.flatMap { $0 }.map { $0.reference != hold.reference } ?? false
    }

    /// Makes the owed calls that are due; answers each job's outcome.
    func runDue(limit: Int = 50) async throws -> [(jobID: String, settled: Settled)] {
        let now = self.now
        let due = try await database.withConnection { db in try await self.holds.claimDue(db, now: now, lease: Self.lease, limit: limit) }
        var outcomes: [(jobID: String, settled: Settled)] = []
        for hold in due { outcomes.append((hold.jobID, await settle(hold))) }
        return outcomes
    }

    public func hold(_ jobID: String) async throws -> HoldRecord? {
        try await database.withConnection { db in try await self.holds.find(db, jobID: jobID) }
    }

    public func events(_ jobID: String) async throws -> [PaymentEventRecord] {
        try await database.withConnection { db in try await self.holds.events(db, jobID: jobID) }
    }

    /// 2 s, 4 s, 8 s … capped at an hour, with ±20 % jitter so retries from many jobs spread out.
    static func backoffMilliseconds(attempt: Int) -> Int64 {
        let base = min(3_600_000, 1_000 << min(attempt, 22))
        return Int64(Double(base) * Double.random(in: 0.8...1.2))
    }

    /// Records a call made before its decision (`failed`: final; `retry`: the same key may be
    /// used again).
    private func record(jobID: String, operation: String, amount: Int64?, error: PaymentError?, key: String) async {
        let now = self.now
        let outcome: PaymentCallOutcome = error.map { $0.isRetryable ? .retry : .failed } ?? .ok
        do {
            try await database.withConnection { db in
                try await self.holds.recordEvent(
                    db, jobID: jobID, provider: self.gateway.provider, operation: operation, amount: amount, outcome: outcome,
                    errorCode: error?.code, key: key, now: now)
            }
        } catch {
            logger.warning("recording a payment event failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// What a client is told when the provider refuses (never the provider's raw answer).
    static func clientError(_ error: PaymentError) -> APIError {
        switch error.kind {
        case .declined: APIError(status: 402, code: .paymentDeclined, message: error.message)
        case .holdClosed: APIError(status: 409, code: .paymentHoldClosed, message: error.message)
        case .invalid: APIError(status: 422, code: .paymentInvalid, message: error.message)
        case .unavailable: APIError(status: 503, code: .paymentUnavailable, message: "The payment provider is not answering; try again shortly.")
        }
    }
}
