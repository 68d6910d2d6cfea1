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
        let (_, current) = try await proposals.customerView(jobID, customerID: customerID)
        let quote = proceed ? nil : try await tripFee(jobID)
        let event = AdjustmentLifecycle.Event.decline(by: customerID, proceed: proceed, tripFeeMinor: quote?.fee ?? 0)
        guard let change = try proposals.change(current, event), let current else { return try await proposals.outcome(jobID) }
        let decided =
            if let quote {
                try await endWithTripFee(current, change, quote, actorID: customerID, onlyAfterDeadline: false)
            } else {
                try await declineAndProceed(current, change, customerID: customerID)
            }
        guard decided != nil else { return try await proposals.answerRepeat(jobID, event) }
        return try await proposals.outcome(jobID)
    }

    /// The decline that keeps the job: the proposal is declined without a trip fee, the job
    /// stays `arrived` at its booked price and hold, and the driver is told to go ahead.
    private func declineAndProceed(_ current: AdjustmentRecord, _ change: AdjustmentLifecycle.Change, customerID: String) async throws
        -> AdjustmentRecord?
    {
        let jobID = current.jobID
        let now = self.now
        let prepared = await proposals.prepare(change, current)
        do {
            return try await book.database.unitOfWork { work in
                try await self.proposals.commit(change, actorID: customerID, prepared: prepared, in: work, now: now) {
                    try await self.book.store.lock(work.db, id: jobID)  // the job before its adjustment, as everywhere
                    let decided = try await self.proposals.store.decide(work.db, jobID: jobID, to: change.to, by: customerID, tripFeeMinor: nil, now: now)
                    return decided.map { PriceAdjustments.Committed(adjustment: $0) }
                }?.adjustment
            }
        } catch is PriceAdjustments.Superseded {
            return nil
        }
    }

    /// The trip fee this job's hold can pay: the configured fee, capped at what the card
    /// authorised (every message states the fee that will be captured, not the configured one).
    /// Read once per decision: the rule's messages and the ending use the same figure.
    func tripFee(_ jobID: String) async throws -> TripFeeQuote {
        let configured = Int64(paymentsConfig.tripFeeMinor)
        let hold = try await payments.hold(jobID)
        return TripFeeQuote(fee: Swift.min(configured, hold?.authorizedMinor ?? configured), held: hold != nil)
    }

    /// The fee a job ending now would pay, and whether a hold exists to capture it from (a job
    /// booked without payments ends with no capture).
    struct TripFeeQuote {
        let fee: Int64
        let held: Bool
    }

    /// Decides `current` as `change` says, ending the job with the trip fee: the job is
    /// cancelled and the fee is captured (the rest of the hold released), all in one
    /// transaction with the owed payment call; nil when another decision won.
    func endWithTripFee(
        _ current: AdjustmentRecord, _ change: AdjustmentLifecycle.Change, _ quote: TripFeeQuote, actorID: String, onlyAfterDeadline: Bool
    ) async throws -> AdjustmentRecord? {
        let jobID = current.jobID
        let now = self.now
        let fee = quote.fee
        guard let actor = change.jobEndedBy else { return nil }
        // A pending proposal means the job waits at the door (`arrived`); anything else lost a race.
        guard let job = try await book.find(jobID), case .move(let ending) = JobLifecycle.decide(job, .endWithTripFee(by: actor, fee: quote.held ? fee : nil))
        else { return nil }
        let prepared = await proposals.prepare(change, current)
        do {
            return try await book.database.unitOfWork { work in
                try await self.proposals.commit(change, actorID: actorID, prepared: prepared, ending: ending, in: work, now: now) {
                    try await self.book.store.lock(work.db, id: jobID)  // the job before its adjustment, as everywhere
                    let decided = try await self.proposals.store.decide(
                        work.db, jobID: jobID, to: change.to, by: actorID, tripFeeMinor: fee, now: now, onlyAfterDeadline: onlyAfterDeadline)
                    return decided.map { PriceAdjustments.Committed(adjustment: $0) }
                }?.adjustment
            }
        } catch is PriceAdjustments.Superseded {
            return nil
        }
    }
}
