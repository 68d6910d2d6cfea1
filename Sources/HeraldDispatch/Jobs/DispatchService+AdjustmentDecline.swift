import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import SQLKit

extension DispatchService {
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

    /// The trip fee this job's hold can pay: the configured fee, capped at what the card
    /// authorised (every message states the fee that will be captured, not the configured one).
    func tripFee(_ jobID: String) async throws -> Int64 {
        let configured = Int64(paymentsConfig.tripFeeMinor)
        return Swift.min(configured, try await payments.hold(jobID)?.authorizedMinor ?? configured)
    }

    /// Decides `current` as `status` with the trip fee: the job is cancelled and the fee is
    /// captured (the rest of the hold released) — all in one transaction with the owed
    /// payment call; nil when another decision won.
    func endWithTripFee(
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
}
