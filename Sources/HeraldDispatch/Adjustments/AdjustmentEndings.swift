import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import SQLKit

/// How a price proposal ends without an approval: the customer declines (the job ends with
/// the trip fee, or goes on at its booked price), the driver asks for more time or leaves
/// with the trip fee once the deadline passed, and drivers hear when a deadline passes.
///
/// Why apart from `PriceAdjustments`: a proposal and its approval change the price; these end
/// it, most of them by ending the job through the lifecycle (`endWithTripFee`).
public final class AdjustmentEndings: Sendable {
    let proposals: PriceAdjustments

    init(proposals: PriceAdjustments) {
        self.proposals = proposals
    }

    var book: JobBook { proposals.book }
    var transitions: JobTransitions { proposals.transitions }
    var notifier: JobNotifier { proposals.notifier }
    var payments: JobPayments { proposals.payments }
    var paymentsConfig: PaymentsConfig { proposals.paymentsConfig }
    var deadlinesChanged: WakeSignal { proposals.deadlinesChanged }
    var now: Int64 { proposals.now }
}

extension AdjustmentEndings {
    /// `POST /jobs/{id}/volume/decline` (the job's customer): the job is cancelled and the
    /// trip fee captured from the hold (the rest released); or, with `proceed`, the job goes on
    /// at its booked price and hold (the only two outcomes of a decline the price-adjustment
    /// design allows, one adjustment per job). Declining again returns the same.
    public func declineVolume(_ jobID: String, customerID: String, proceed: Bool = false) async throws -> AdjustmentOutcome {
        let (_, current) = try await proposals.customerProposal(jobID, customerID: customerID, deciding: .declined)
        if current.status == .declined { return try await proposals.outcome(jobID) }
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
            return try await proposals.answerRepeat(jobID, customerID: customerID, deciding: .declined)
        }
        await notifier.publish(
            "volume:declined",
            [
                "job_id": .string(jobID), "trip_fee": .number(Double(decided.tripFeeMinor ?? 0) / 100),
                "trip_fee_minor": DispatchJSON.integer(decided.tripFeeMinor),
                "currency": .string(decided.currency), "proceed_at_original_price": false,
            ],
            to: DispatchService.driverRoom(decided.driverID))
        return try await proposals.outcome(jobID)
    }

    /// The decline that keeps the job: the proposal is declined without a trip fee, the job
    /// stays `arrived` at its booked price and hold, and the driver is told to go ahead.
    private func declineAndProceed(_ current: AdjustmentRecord, customerID: String) async throws -> AdjustmentOutcome {
        let jobID = current.jobID
        let now = self.now
        let prepared = await notifier.prepare(
            NotificationDraft(
                userIDs: [current.driverID], type: "job_update", title: "Proceed at the original price",
                body:
                    "The customer declined \(DisplayFormat.money(current.newPriceMinor, currency: current.currency)) and keeps \(DisplayFormat.money(current.originalPriceMinor, currency: current.currency)). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_declined_proceed"], collapseKey: "volume-\(jobID)"))
        let decided: Bool
        do {
            decided = try await book.database.unitOfWork { work in
                let db = work.db
                try await self.book.store.lock(db, id: jobID)  // the job before its adjustment, as everywhere
                guard let decided = try await self.proposals.store.decide(db, jobID: jobID, to: .declined, by: customerID, tripFeeMinor: nil, now: now) else {
                    return false
                }
                guard let job = try await self.book.store.touchArrived(db, id: jobID, driverID: nil, price: nil, now: now) else {
                    throw PriceAdjustments.Superseded()
                }
                work.afterCommit {
                    await self.notifier.publish(
                        "volume:declined",
                        [
                            "job_id": .string(jobID), "trip_fee": 0, "trip_fee_minor": 0, "currency": .string(decided.currency),
                            "proceed_at_original_price": true,
                            "price_minor": .number(Double(job.priceMinor)),
                        ],
                        to: DispatchService.driverRoom(decided.driverID))
                }
                try await self.notifier.write(prepared, in: work)
                return true
            }
        } catch is PriceAdjustments.Superseded {
            decided = false
        }
        guard decided else { return try await proposals.answerRepeat(jobID, customerID: customerID, deciding: .declined) }
        return try await proposals.outcome(jobID)
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
        // A pending proposal means the job waits at the door (`arrived`); anything else lost a race.
        guard let job = try await book.find(jobID),
            case .move(let transition) = JobLifecycle.decide(job, .endWithTripFee(by: actor, fee: hold == nil ? nil : fee))
        else { return nil }
        let prepared = await notifier.prepare(draft).map { [$0] } ?? []
        return try await book.database.unitOfWork { work -> AdjustmentRecord? in
            let db = work.db
            try await self.book.store.lock(db, id: jobID)  // the job before its adjustment, as everywhere
            guard
                let decided = try await self.proposals.store.decide(
                    db, jobID: jobID, to: status, by: actorID, tripFeeMinor: fee, now: now, onlyAfterDeadline: onlyAfterDeadline)
            else { return nil }
            _ = try await self.transitions.commit(
                transition, jobID: jobID, actorID: actorID, reason: reason, driver: nil, prepared: prepared, in: work, now: now
            ) {
                guard
                    let cancelled = try await self.book.store.transition(
                        db, id: jobID, from: .arrived, to: .cancelled, driverID: nil, now: now, cancelledBy: actor.rawValue, reason: reason)
                else { throw PriceAdjustments.Superseded() }
                return cancelled
            }
            return decided
        }
    }
}
