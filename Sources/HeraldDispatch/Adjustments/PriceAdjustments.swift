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
        if let existing = try await adjustment(jobID) { throw DispatchError.alreadyMade(existing) }
        guard job.status == .arrived else { throw DispatchError.notArrived(job.status) }
        let items = (try? JSONDecoder().decode([JobItem].self, from: Data(job.items.utf8))) ?? []
        let quote = pricing.quote(
            PricingRequest(
                items: items, volumeHundredths: actualHundredths, scheduledAt: job.scheduledAt.map { Date(epochMilliseconds: $0) },
                bookedAt: Date(epochMilliseconds: job.createdAt)))
        let newPrice = Int64(quote.totalMinor)
        let increase = newPrice > job.priceMinor
        let now = self.now
        let lines = String(decoding: try JSONEncoder().encode(quote.lines), as: UTF8.self)
        let adjustment = AdjustmentRecord(
            jobID: jobID, driverID: driverID, customerID: job.customerID, status: increase ? .pending : .approved,
            automatic: increase ? 0 : 1, originalVolumeHundredths: job.volumeHundredths, actualVolumeHundredths: Int64(actualHundredths),
            originalPriceMinor: job.priceMinor, newPriceMinor: newPrice, currency: job.currency, priceLines: lines, tripFeeMinor: nil,
            deadlineAt: increase ? now + Int64(paymentsConfig.adjustmentTimeoutSeconds) * 1000 : nil, extensions: 0, expiredAt: nil,
            decidedAt: increase ? nil : now, decidedBy: increase ? nil : "system", createdAt: now, updatedAt: now)
        let prepared = await notifier.prepare(increase ? proposalNotification(adjustment, reminder: false) : loweredNotification(adjustment))
        let payload = JSONValue.object(DispatchJSON.adjustmentEvent(adjustment))
        let updated: JobRecord
        do {
            updated = try await book.database.unitOfWork { work in
                let db = work.db
                // The job's row is locked in `arrived` for this transaction: a concurrent step to
                // `started` waits, then finds the pending proposal and stops.
                let price = increase ? nil : (newPrice, lines, Int64(actualHundredths))
                guard let locked = try await self.book.store.touchArrived(db, id: jobID, driverID: driverID, price: price, now: now) else { throw Superseded() }
                guard try await self.store.insert(db, adjustment) else { throw Superseded() }
                if !increase { try await self.holds.plan(db, jobID: jobID, .change(newPrice), now: now) }
                work.afterCommit {
                    if increase {
                        self.deadlinesChanged.signal()
                        await self.notifier.publish(batch: [
                            ("volume:proposed", payload, RoomName.user(job.customerID)), ("volume:proposed", payload, DispatchService.driverRoom(driverID)),
                        ])
                    } else {
                        await self.transitions.settle(jobID)
                        await self.notifier.publish(batch: [
                            ("volume:approved", payload, DispatchService.driverRoom(driverID)), ("volume:approved", payload, RoomName.user(job.customerID)),
                        ])
                    }
                }
                try await self.notifier.write(prepared, in: work)
                return locked
            }
        } catch is Superseded {
            if let existing = try await self.adjustment(jobID) { throw DispatchError.alreadyMade(existing) }
            throw DispatchError.notArrived(try await book.assigned(jobID, driverID: driverID).status)
        }
        return AdjustmentOutcome(job: updated, adjustment: adjustment, hold: try await payments.hold(jobID))
    }

    /// `POST /jobs/{id}/volume/approve` (the job's customer): the hold is raised first — a
    /// card that refuses leaves the proposal pending (402) — then one conditional update
    /// decides. Approving again returns the same result.
    public func approveVolume(_ jobID: String, customerID: String) async throws -> AdjustmentOutcome {
        let (job, current) = try await customerProposal(jobID, customerID: customerID, deciding: .approved)
        if current.status == .approved { return AdjustmentOutcome(job: job, adjustment: current, hold: try await payments.hold(jobID)) }
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
                return try await answerRepeat(jobID, customerID: customerID, deciding: .approved)
            }
            throw error
        }
        let now = self.now
        let prepared = await notifier.prepare(
            NotificationDraft(
                userIDs: [current.driverID], type: "job_update", title: "New price approved",
                body: "The customer approved \(DisplayFormat.money(current.newPriceMinor, currency: current.currency)). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_approved"], collapseKey: "volume-\(jobID)"))
        let result = try await book.database.unitOfWork { work -> (JobRecord, AdjustmentRecord)? in
            let db = work.db
            try await self.book.store.lock(db, id: jobID)  // the job before its adjustment, as everywhere
            guard let decided = try await self.store.decide(db, jobID: jobID, to: .approved, by: customerID, tripFeeMinor: nil, now: now) else {
                return nil
            }
            let price = (decided.newPriceMinor, decided.priceLines, decided.actualVolumeHundredths)
            guard let updated = try await self.book.store.touchArrived(db, id: jobID, driverID: nil, price: price, now: now) else { throw Superseded() }
            if let raised { try await self.holds.applied(db, jobID: jobID, raised, settling: nil, now: now) }
            let payload = JSONValue.object(DispatchJSON.adjustmentEvent(decided))
            work.afterCommit {
                await self.notifier.publish(batch: [
                    ("volume:approved", payload, DispatchService.driverRoom(decided.driverID)), ("volume:approved", payload, RoomName.user(customerID)),
                ])
            }
            try await self.notifier.write(prepared, in: work)
            return (updated, decided)
        }
        guard let (updated, decided) = result else { return try await answerRepeat(jobID, customerID: customerID, deciding: .approved) }
        return AdjustmentOutcome(job: updated, adjustment: decided, hold: try await payments.hold(jobID))
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

    /// The job and its adjustment for the customer's decision; throws unless it can be made
    /// (or repeats the same decision).
    func customerProposal(_ jobID: String, customerID: String, deciding: AdjustmentStatus) async throws -> (JobRecord, AdjustmentRecord) {
        let (job, _) = try await book.job(jobID, for: Identity(userID: customerID, role: .customer, expiresAt: .infinity))
        guard let current = try await adjustment(jobID), current.automatic == 0 else { throw DispatchError.noPendingAdjustment }
        switch current.status {
        case .pending: return (job, current)
        case deciding where current.decidedBy == customerID: return (job, current)
        default: throw DispatchError.alreadyDecided(current)
        }
    }

    /// After losing the decision race: the same decision (a double tap) gets its result,
    /// the opposite one a 409.
    func answerRepeat(_ jobID: String, customerID: String, deciding: AdjustmentStatus) async throws -> AdjustmentOutcome {
        guard let fresh = try await adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
        if fresh.status == deciding && fresh.decidedBy == customerID { return try await outcome(jobID) }
        throw DispatchError.alreadyDecided(fresh)
    }

    func outcome(_ jobID: String) async throws -> AdjustmentOutcome {
        try await book.database.withConnection { db in
            guard let job = try await self.book.store.find(db, id: jobID), let adjustment = try await self.store.find(db, jobID: jobID) else {
                throw DispatchError.jobNotFound
            }
            return AdjustmentOutcome(job: job, adjustment: adjustment, hold: try await self.holds.find(db, jobID: jobID))
        }
    }

    /// The customer's actionable push (category `VOLUME_ADJUSTMENT`, time-sensitive).
    func proposalNotification(_ a: AdjustmentRecord, reminder: Bool) -> NotificationDraft {
        NotificationDraft(
            userIDs: [a.customerID], type: "volume_adjustment", title: reminder ? "Reminder: Price Adjustment Required" : "Price Adjustment Required",
            body:
                "Volume increased to \(DisplayFormat.yards(a.actualVolumeHundredths)) cu yd. New price: \(DisplayFormat.money(a.newPriceMinor, currency: a.currency))",
            data: [
                "job_id": .string(a.jobID), "new_price": .number(Double(a.newPriceMinor) / 100), "new_price_minor": .number(Double(a.newPriceMinor)),
                "currency": .string(a.currency), "actual_volume": .number(DisplayFormat.yardsValue(a.actualVolumeHundredths)),
                "deadline_at": DispatchJSON.time(a.deadlineAt), "actions": ["APPROVE_VOLUME", "DECLINE_VOLUME"],
            ],
            category: "VOLUME_ADJUSTMENT", threadID: "job-\(a.jobID)", collapseKey: "volume-\(a.jobID)")
    }

    func loweredNotification(_ a: AdjustmentRecord) -> NotificationDraft {
        NotificationDraft(
            userIDs: [a.customerID], type: "job_update", title: "Good news: lower price",
            body:
                "Volume adjusted to \(DisplayFormat.yards(a.actualVolumeHundredths)) cu yd. New price: \(DisplayFormat.money(a.newPriceMinor, currency: a.currency))",
            data: [
                "job_id": .string(a.jobID), "new_price_minor": .number(Double(a.newPriceMinor)), "currency": .string(a.currency), "event": "volume_lowered",
            ],
            collapseKey: "job-\(a.jobID)")
    }
}
