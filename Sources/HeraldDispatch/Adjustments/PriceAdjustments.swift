import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import SQLKit

/// The on-site price adjustment: the driver measures, Herald reprices, the customer approves
/// or declines a higher price, the hold follows (the other endings: `AdjustmentEndings`).
///
/// Why the job's row is locked before its adjustment in every transaction here: a proposal,
/// the customer's decision and the driver's step to `started` race on the same job; taking
/// the job first everywhere keeps them from deadlocking, and a step that waited sees the
/// proposal committed meanwhile.
public final class PriceAdjustments: Sendable {
    let book: JobBook
    let transitions: JobTransitions
    let pricing: PricingEngine
    let paymentsConfig: PaymentsConfig
    /// The `job_adjustments` table.
    let store = AdjustmentStore()
    let holds = HoldStore()
    /// Wakes the adjustment scheduler (a deadline is due sooner than its next poll).
    let deadlinesChanged: WakeSignal

    init(book: JobBook, transitions: JobTransitions, pricing: PricingEngine, paymentsConfig: PaymentsConfig, deadlinesChanged: WakeSignal) {
        self.book = book
        self.transitions = transitions
        self.pricing = pricing
        self.paymentsConfig = paymentsConfig
        self.deadlinesChanged = deadlinesChanged
    }

    var now: Int64 { transitions.now }
    var notifier: JobNotifier { transitions.notifier }
    var payments: JobPayments { transitions.payments }

    /// A transaction found the row changed under it; the caller answers from what won.
    struct Superseded: Error {}

    /// `POST /drivers/jobs/{id}/volume`: the assigned driver's measurement while `arrived`.
    /// Not higher than the current price: approved at once and the hold lowered (pitfall 5).
    /// Higher: a proposal with a deadline, pushed to the customer as `VOLUME_ADJUSTMENT`.
    public func proposeVolume(_ jobID: String, driverID: String, actualHundredths: Int) async throws -> AdjustmentOutcome {
        let job = try await book.assigned(jobID, driverID: driverID)
        let existing = try await adjustment(jobID)
        let items = (try? JSONDecoder().decode([JobItem].self, from: Data(job.items.utf8))) ?? []
        let quote = pricing.quote(
            PricingRequest(
                items: items, volumeHundredths: actualHundredths, scheduledAt: job.scheduledAt.map { Date(epochMilliseconds: $0) },
                bookedAt: Date(epochMilliseconds: job.createdAt)))
        let newPrice = Int64(quote.totalMinor)
        // One adjustment per job, so a proposal is never a repeat.
        guard let change = try change(existing, .propose(newPriceMinor: newPrice, job: job)) else { throw Self.error(.alreadyMade, existing) }
        let waits = change.to == .pending
        let now = self.now
        let lines = String(decoding: try JSONEncoder().encode(quote.lines), as: UTF8.self)
        let adjustment = AdjustmentRecord(
            jobID: jobID, driverID: driverID, customerID: job.customerID, status: change.to, automatic: waits ? 0 : 1,
            originalVolumeHundredths: job.volumeHundredths, actualVolumeHundredths: Int64(actualHundredths), originalPriceMinor: job.priceMinor,
            newPriceMinor: newPrice, currency: job.currency, priceLines: lines, tripFeeMinor: nil,
            deadlineAt: waits ? now + Int64(paymentsConfig.adjustmentTimeoutSeconds) * 1000 : nil, extensions: 0, expiredAt: nil,
            decidedAt: waits ? nil : now, decidedBy: waits ? nil : "system", createdAt: now, updatedAt: now)
        let prepared = await prepare(change, adjustment)
        let committed: Committed?
        do {
            committed = try await book.database.unitOfWork { work in
                try await self.commit(change, actorID: driverID, prepared: prepared, in: work, now: now) {
                    // The job's row is locked in `arrived` for this transaction: a concurrent step
                    // to `started` waits, then finds the pending proposal and stops.
                    guard let locked = try await self.book.store.touchArrived(work.db, id: jobID, driverID: driverID, price: nil, now: now) else {
                        throw Superseded()
                    }
                    guard try await self.store.insert(work.db, adjustment) else { throw Superseded() }
                    return Committed(adjustment: adjustment, job: locked)
                }
            }
        } catch is Superseded {
            committed = nil
        }
        guard let committed, let updated = committed.job else {
            if let existing = try await self.adjustment(jobID) { throw DispatchError.alreadyMade(existing) }
            throw DispatchError.notArrived(try await book.assigned(jobID, driverID: driverID).status)
        }
        return AdjustmentOutcome(job: updated, adjustment: adjustment, hold: try await payments.hold(jobID))
    }

    /// `POST /jobs/{id}/volume/approve` (the job's customer): the hold is raised first — a
    /// card that refuses leaves the proposal pending (402) — then one conditional update
    /// decides. Approving again returns the same result.
    public func approveVolume(_ jobID: String, customerID: String) async throws -> AdjustmentOutcome {
        let (_, current) = try await customerView(jobID, customerID: customerID)
        // A repeat answers the approval as it stands.
        guard let change = try change(current, .approve(by: customerID)), let current else { return try await outcome(jobID) }
        let raised: HoldState?
        do {
            raised =
                if let hold = try await payments.hold(jobID), hold.state.status == .authorized, current.newPriceMinor != hold.amountMinor {
                    try await payments.change(jobID: jobID, hold: hold, to: current.newPriceMinor)
                } else { nil }
        } catch {
            // A decline or the driver's cancel may have won meanwhile (and closed the hold):
            // answer with what won rather than with the payment's refusal.
            if let fresh = try await adjustment(jobID), fresh.status != .pending {
                return try await answerRepeat(jobID, .approve(by: customerID))
            }
            throw error
        }
        let now = self.now
        let prepared = await prepare(change, current)
        let committed = try await book.database.unitOfWork { work in
            try await self.commit(change, actorID: customerID, prepared: prepared, raised: raised, in: work, now: now) {
                try await self.book.store.lock(work.db, id: jobID)  // the job before its adjustment, as everywhere
                guard let decided = try await self.store.decide(work.db, jobID: jobID, to: change.to, by: customerID, tripFeeMinor: nil, now: now) else {
                    return nil
                }
                return Committed(adjustment: decided)
            }
        }
        guard let committed, let updated = committed.job else { return try await answerRepeat(jobID, .approve(by: customerID)) }
        return AdjustmentOutcome(job: updated, adjustment: committed.adjustment, hold: try await payments.hold(jobID))
    }

    /// A job's adjustment and payment hold, read together (the job view shows both).
    public func adjustmentAndHold(_ jobID: String) async throws -> (adjustment: AdjustmentRecord?, hold: HoldRecord?) {
        try await book.database.withConnection { db in
            (try await self.store.find(db, jobID: jobID), try await self.holds.find(db, jobID: jobID))
        }
    }

    /// The job's adjustment, if any.
    public func adjustment(_ jobID: String) async throws -> AdjustmentRecord? {
        try await book.database.withConnection { db in try await self.store.find(db, jobID: jobID) }
    }

    // MARK: Pieces

    /// The job (the same 404 for missing and not yours) and its adjustment, for the customer's decision.
    func customerView(_ jobID: String, customerID: String) async throws -> (JobRecord, AdjustmentRecord?) {
        let (job, _) = try await book.job(jobID, for: Identity(userID: customerID, role: .customer, expiresAt: .infinity))
        return (job, try await adjustment(jobID))
    }

    /// After losing a decision race: the same party's same decision (a double tap) gets its
    /// result, anything else the refusal.
    func answerRepeat(_ jobID: String, _ event: AdjustmentLifecycle.Event) async throws -> AdjustmentOutcome {
        let fresh = try await adjustment(jobID)
        if try change(fresh, event) == nil { return try await outcome(jobID) }
        throw Self.error(.alreadyDecided, fresh)
    }

    func outcome(_ jobID: String) async throws -> AdjustmentOutcome {
        try await book.database.withConnection { db in
            guard let job = try await self.book.store.find(db, id: jobID), let adjustment = try await self.store.find(db, jobID: jobID) else {
                throw DispatchError.jobNotFound
            }
            return AdjustmentOutcome(job: job, adjustment: adjustment, hold: try await self.holds.find(db, jobID: jobID))
        }
    }
}
