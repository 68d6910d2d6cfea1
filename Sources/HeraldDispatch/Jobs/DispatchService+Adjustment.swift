import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import SQLKit

/// The on-site price adjustment: the driver measures, Herald reprices, the
/// customer approves or declines a higher price, the hold follows.
extension DispatchService {
    /// The result of an adjustment call: the job, its adjustment and its payment hold.
    public struct AdjustmentOutcome: Sendable {
        public var job: JobRecord
        public var adjustment: AdjustmentRecord
        public var hold: HoldRecord?
    }

    /// A transaction found the row changed under it; the caller answers from what won.
    private struct Superseded: Error {}

    /// `POST /drivers/jobs/{id}/volume`: the assigned driver's measurement while `arrived`.
    /// Not higher than the current price: approved at once and the hold lowered (pitfall 5).
    /// Higher: a proposal with a deadline, pushed to the customer as `VOLUME_ADJUSTMENT`.
    public func proposeVolume(_ jobID: String, driverID: String, actualHundredths: Int) async throws -> AdjustmentOutcome {
        let job = try await assignedJob(jobID, driverID: driverID)
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
        let prepared = await prepareNotification(increase ? proposalNotification(adjustment, reminder: false) : loweredNotification(adjustment))
        let payload = JSONValue.object(DispatchJSON.adjustmentEvent(adjustment))
        let updated: JobRecord
        do {
            updated = try await database.unitOfWork { work in
                let db = work.db
                // The job's row is locked in `arrived` for this transaction: a concurrent step to
                // `started` waits, then finds the pending proposal and stops.
                let price = increase ? nil : (newPrice, lines, Int64(actualHundredths))
                guard let locked = try await self.jobs.touchArrived(db, id: jobID, driverID: driverID, price: price, now: now) else { throw Superseded() }
                guard try await self.adjustments.insert(db, adjustment) else { throw Superseded() }
                if !increase { try await self.holds.plan(db, jobID: jobID, .change(newPrice), now: now) }
                work.afterCommit {
                    if increase {
                        self.adjustmentsChanged.signal()
                        await self.publish(batch: [
                            ("volume:proposed", payload, RoomName.user(job.customerID)), ("volume:proposed", payload, Self.driverRoom(driverID)),
                        ])
                    } else {
                        await self.settlePayment(jobID)
                        await self.publish(batch: [
                            ("volume:approved", payload, Self.driverRoom(driverID)), ("volume:approved", payload, RoomName.user(job.customerID)),
                        ])
                    }
                }
                try await self.write(prepared, in: work)
                return locked
            }
        } catch is Superseded {
            if let existing = try await self.adjustment(jobID) { throw DispatchError.alreadyMade(existing) }
            throw DispatchError.notArrived(try await assignedJob(jobID, driverID: driverID).status)
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
        let prepared = await prepareNotification(
            NotificationDraft(
                userIDs: [current.driverID], type: "job_update", title: "New price approved",
                body: "The customer approved \(DisplayFormat.money(current.newPriceMinor, currency: current.currency)). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_approved"], collapseKey: "volume-\(jobID)"))
        let result = try await database.unitOfWork { work -> (JobRecord, AdjustmentRecord)? in
            let db = work.db
            try await self.jobs.lock(db, id: jobID)  // the job before its adjustment, as everywhere
            guard let decided = try await self.adjustments.decide(db, jobID: jobID, to: .approved, by: customerID, tripFeeMinor: nil, now: now) else {
                return nil
            }
            let price = (decided.newPriceMinor, decided.priceLines, decided.actualVolumeHundredths)
            guard let updated = try await self.jobs.touchArrived(db, id: jobID, driverID: nil, price: price, now: now) else { throw Superseded() }
            if let raised { try await self.holds.applied(db, jobID: jobID, raised, settling: nil, now: now) }
            let payload = JSONValue.object(DispatchJSON.adjustmentEvent(decided))
            work.afterCommit {
                await self.publish(batch: [
                    ("volume:approved", payload, Self.driverRoom(decided.driverID)), ("volume:approved", payload, RoomName.user(customerID)),
                ])
            }
            try await self.write(prepared, in: work)
            return (updated, decided)
        }
        guard let (updated, decided) = result else { return try await answerRepeat(jobID, customerID: customerID, deciding: .approved) }
        return AdjustmentOutcome(job: updated, adjustment: decided, hold: try await payments.hold(jobID))
    }

    /// `POST /jobs/{id}/volume/decline` (the job's customer): the job is cancelled and the
    /// trip fee captured from the hold (the rest released); or, with `proceed`, the job goes on
    /// at its booked price and hold (the only two outcomes of a decline the price-adjustment
    /// design allows, one adjustment per job). Declining again returns the same.
    public func declineVolume(_ jobID: String, customerID: String, proceed: Bool = false) async throws -> AdjustmentOutcome {
        let (_, current) = try await customerProposal(jobID, customerID: customerID, deciding: .declined)
        if current.status == .declined { return try await outcome(jobID) }
        if proceed { return try await declineAndProceed(current, customerID: customerID) }
        let fee = try await tripFee(jobID)
        let draft = NotificationDraft(
            userIDs: [current.driverID], type: "job_update", title: "Customer declined the new price",
            body: "The job is cancelled; you get the \(DisplayFormat.money(fee, currency: current.currency)) trip fee.",
            data: ["job_id": .string(jobID), "event": "volume_declined"], collapseKey: "volume-\(jobID)")
        guard
            let decided = try await endWithTripFee(
                current, to: .declined, actorID: customerID, actor: .customer, reason: "volume_declined", notify: draft, onlyAfterDeadline: false)
        else {
            return try await answerRepeat(jobID, customerID: customerID, deciding: .declined)
        }
        await publish(
            "volume:declined",
            [
                "job_id": .string(jobID), "trip_fee": .number(Double(decided.tripFeeMinor ?? 0) / 100),
                "trip_fee_minor": DispatchJSON.integer(decided.tripFeeMinor),
                "currency": .string(decided.currency), "proceed_at_original_price": false,
            ],
            to: Self.driverRoom(decided.driverID))
        return try await outcome(jobID)
    }

    /// The decline that keeps the job: the proposal is declined without a trip fee, the job
    /// stays `arrived` at its booked price and hold, and the driver is told to go ahead.
    private func declineAndProceed(_ current: AdjustmentRecord, customerID: String) async throws -> AdjustmentOutcome {
        let jobID = current.jobID
        let now = self.now
        let prepared = await prepareNotification(
            NotificationDraft(
                userIDs: [current.driverID], type: "job_update", title: "Proceed at the original price",
                body:
                    "The customer declined \(DisplayFormat.money(current.newPriceMinor, currency: current.currency)) and keeps \(DisplayFormat.money(current.originalPriceMinor, currency: current.currency)). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_declined_proceed"], collapseKey: "volume-\(jobID)"))
        let decided: Bool
        do {
            decided = try await database.unitOfWork { work in
                let db = work.db
                try await self.jobs.lock(db, id: jobID)  // the job before its adjustment, as everywhere
                guard let decided = try await self.adjustments.decide(db, jobID: jobID, to: .declined, by: customerID, tripFeeMinor: nil, now: now) else {
                    return false
                }
                guard let job = try await self.jobs.touchArrived(db, id: jobID, driverID: nil, price: nil, now: now) else { throw Superseded() }
                work.afterCommit {
                    await self.publish(
                        "volume:declined",
                        [
                            "job_id": .string(jobID), "trip_fee": 0, "trip_fee_minor": 0, "currency": .string(decided.currency),
                            "proceed_at_original_price": true,
                            "price_minor": .number(Double(job.priceMinor)),
                        ],
                        to: Self.driverRoom(decided.driverID))
                }
                try await self.write(prepared, in: work)
                return true
            }
        } catch is Superseded {
            decided = false
        }
        guard decided else { return try await answerRepeat(jobID, customerID: customerID, deciding: .declined) }
        return try await outcome(jobID)
    }

    /// `POST /drivers/jobs/{id}/volume/extend`: more time for the customer, and a reminder.
    public func extendProposal(_ jobID: String, driverID: String) async throws -> AdjustmentOutcome {
        _ = try await assignedJob(jobID, driverID: driverID)
        guard let current = try await adjustment(jobID), current.status == .pending else { throw DispatchError.noPendingAdjustment }
        let now = self.now
        let deadline = max(now, current.deadlineAt ?? now) + Int64(paymentsConfig.adjustmentExtensionSeconds) * 1000
        let max = paymentsConfig.maxAdjustmentExtensions
        var reminder = current
        reminder.deadlineAt = deadline
        let prepared = await prepareNotification(proposalNotification(reminder, reminder: true))
        let extended = try await database.unitOfWork { work -> Bool in
            guard let extended = try await self.adjustments.extend(work.db, jobID: jobID, deadline: deadline, maxExtensions: max, now: now) else {
                return false
            }
            let payload = JSONValue.object(DispatchJSON.adjustmentEvent(extended))
            work.afterCommit {
                self.adjustmentsChanged.signal()
                await self.publish(batch: [
                    ("volume:proposed", payload, RoomName.user(extended.customerID)), ("volume:extended", payload, Self.driverRoom(driverID)),
                ])
            }
            try await self.write(prepared, in: work)
            return true
        }
        guard extended else {
            guard let fresh = try await adjustment(jobID), fresh.status == .pending else { throw DispatchError.noPendingAdjustment }
            throw DispatchError.extensionLimit(max)
        }
        return try await outcome(jobID)
    }

    /// `POST /drivers/jobs/{id}/cancel-with-trip-fee`: after an unanswered deadline, the
    /// driver ends the job and is paid the trip fee (so a silent customer never strands them).
    public func cancelWithTripFee(_ jobID: String, driverID: String) async throws -> AdjustmentOutcome {
        _ = try await assignedJob(jobID, driverID: driverID)
        guard let current = try await adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
        switch current.status {
        case .cancelled where current.decidedBy == driverID: return try await outcome(jobID)
        case .pending: break
        default: throw DispatchError.alreadyDecided(current)
        }
        guard (current.deadlineAt ?? 0) <= now else { throw DispatchError.notExpired(current) }
        let fee = try await tripFee(jobID)
        let draft = NotificationDraft(
            userIDs: [current.customerID], type: "job_update", title: "Job cancelled",
            body: "You did not answer the new price, so the driver left. A \(DisplayFormat.money(fee, currency: current.currency)) trip fee applies.",
            data: ["job_id": .string(jobID), "status": "cancelled", "event": "trip_fee"], collapseKey: "job-\(jobID)")
        guard
            try await endWithTripFee(
                current, to: .cancelled, actorID: driverID, actor: .driver, reason: "customer_unresponsive", notify: draft, onlyAfterDeadline: true) != nil
        else {
            guard let fresh = try await adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
            if fresh.status == .cancelled && fresh.decidedBy == driverID { return try await outcome(jobID) }
            if fresh.status == .pending { throw DispatchError.notExpired(fresh) }
            throw DispatchError.alreadyDecided(fresh)
        }
        return try await outcome(jobID)
    }

    /// Tells drivers whose proposal's deadline passed (`volume:expired` and a push); returns how many.
    public func expireDueProposals(limit: Int = 100) async throws -> Int {
        let now = self.now
        let due = try await database.withConnection { db in try await self.adjustments.dueExpiries(db, now: now, limit: limit) }
        var told = 0
        for proposal in due {
            let extensionsLeft = Swift.max(0, paymentsConfig.maxAdjustmentExtensions - proposal.extensions)
            let prepared = await prepareNotification(
                NotificationDraft(
                    userIDs: [proposal.driverID], type: "job_update", title: "No answer from the customer",
                    body: extensionsLeft > 0
                        ? "The customer hasn't responded. Call them, wait longer, or cancel with the trip fee."
                        : "The customer hasn't responded. Call them or cancel with the trip fee.",
                    data: ["job_id": .string(proposal.jobID), "event": "volume_expired"], collapseKey: "volume-\(proposal.jobID)"))
            var payload = DispatchJSON.adjustmentEvent(proposal)
            payload["extensions_left"] = .number(Double(extensionsLeft))
            payload["trip_fee_minor"] = .number(Double(try await tripFee(proposal.jobID)))
            let event = JSONValue.object(payload)
            let marked = try await database.unitOfWork { work -> Bool in
                guard try await self.adjustments.markExpired(work.db, jobID: proposal.jobID, deadline: proposal.deadlineAt ?? 0, now: now) else { return false }
                work.afterCommit { await self.publish("volume:expired", event, to: Self.driverRoom(proposal.driverID)) }
                try await self.write(prepared, in: work)
                return true
            }
            if marked { told += 1 }
        }
        return told
    }

    /// A job's adjustment and payment hold, read together (the job view shows both).
    public func adjustmentAndHold(_ jobID: String) async throws -> (adjustment: AdjustmentRecord?, hold: HoldRecord?) {
        try await database.withConnection { db in
            (try await self.adjustments.find(db, jobID: jobID), try await self.holds.find(db, jobID: jobID))
        }
    }

    /// The job's adjustment, if any.
    public func adjustment(_ jobID: String) async throws -> AdjustmentRecord? {
        try await database.withConnection { db in try await self.adjustments.find(db, jobID: jobID) }
    }

    // MARK: Pieces

    /// The trip fee this job's hold can pay: the configured fee, capped at what the card
    /// authorised (every message states the fee that will be captured, not the configured one).
    func tripFee(_ jobID: String) async throws -> Int64 {
        let configured = Int64(paymentsConfig.tripFeeMinor)
        return Swift.min(configured, try await payments.hold(jobID)?.authorizedMinor ?? configured)
    }

    /// Decides `current` as `status` with the trip fee: the job is cancelled and the fee is
    /// captured (the rest of the hold released) — all in one transaction with the owed
    /// payment call; nil when another decision won.
    private func endWithTripFee(
        _ current: AdjustmentRecord, to status: AdjustmentStatus, actorID: String, actor: JobActor, reason: String, notify draft: NotificationDraft,
        onlyAfterDeadline: Bool
    ) async throws -> AdjustmentRecord? {
        let jobID = current.jobID
        let now = self.now
        let hold = try await payments.hold(jobID)
        let configured = Int64(paymentsConfig.tripFeeMinor)
        let fee = Swift.min(configured, hold?.authorizedMinor ?? configured)
        let prepared = await prepareNotification(draft)
        return try await database.unitOfWork { work -> AdjustmentRecord? in
            let db = work.db
            try await self.jobs.lock(db, id: jobID)  // the job before its adjustment, as everywhere
            guard
                let decided = try await self.adjustments.decide(
                    db, jobID: jobID, to: status, by: actorID, tripFeeMinor: fee, now: now, onlyAfterDeadline: onlyAfterDeadline)
            else { return nil }
            guard
                let cancelled = try await self.jobs.transition(
                    db, id: jobID, from: .arrived, to: .cancelled, driverID: nil, now: now, cancelledBy: actor.rawValue, reason: reason)
            else { throw Superseded() }
            try await self.jobs.recordEvent(db, jobID: jobID, from: .arrived, to: .cancelled, actorID: actorID, actor: actor, reason: reason, now: now)
            if hold != nil { try await self.holds.plan(db, jobID: jobID, fee > 0 ? .capture(fee) : .cancel, now: now) }
            work.afterCommit {
                await self.settlePayment(jobID)
                await self.announce(cancelled, previous: .arrived, driver: nil, offeredDrivers: [])
            }
            try await self.write(prepared, in: work)
            try await self.publishActivity(JobActivity.change(cancelled, driverName: nil), in: work)
            return decided
        }
    }

    /// The job and its adjustment for the customer's decision; throws unless it can be made
    /// (or repeats the same decision).
    private func customerProposal(_ jobID: String, customerID: String, deciding: AdjustmentStatus) async throws -> (JobRecord, AdjustmentRecord) {
        let (job, _) = try await self.job(jobID, for: Identity(userID: customerID, role: .customer, expiresAt: .infinity))
        guard let current = try await adjustment(jobID), current.automatic == 0 else { throw DispatchError.noPendingAdjustment }
        switch current.status {
        case .pending: return (job, current)
        case deciding where current.decidedBy == customerID: return (job, current)
        default: throw DispatchError.alreadyDecided(current)
        }
    }

    /// After losing the decision race: the same decision (a double tap) gets its result,
    /// the opposite one a 409.
    private func answerRepeat(_ jobID: String, customerID: String, deciding: AdjustmentStatus) async throws -> AdjustmentOutcome {
        guard let fresh = try await adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
        if fresh.status == deciding && fresh.decidedBy == customerID { return try await outcome(jobID) }
        throw DispatchError.alreadyDecided(fresh)
    }

    private func outcome(_ jobID: String) async throws -> AdjustmentOutcome {
        try await database.withConnection { db in
            guard let job = try await self.jobs.find(db, id: jobID), let adjustment = try await self.adjustments.find(db, jobID: jobID) else {
                throw DispatchError.jobNotFound
            }
            return AdjustmentOutcome(job: job, adjustment: adjustment, hold: try await self.holds.find(db, jobID: jobID))
        }
    }

    /// The job if `driverID` is its driver (anyone else: 404).
    func assignedJob(_ jobID: String, driverID: String) async throws -> JobRecord {
        guard let job = try await database.withConnection({ db in try await self.jobs.find(db, id: jobID) }), job.driverID == driverID else {
            throw DispatchError.jobNotFound
        }
        return job
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
