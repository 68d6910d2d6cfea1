import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import SQLKit

extension AdjustmentEndings {
    /// `POST /drivers/jobs/{id}/volume/extend`: more time for the customer, and a reminder.
    public func extendProposal(_ jobID: String, driverID: String) async throws -> AdjustmentOutcome {
        _ = try await book.assigned(jobID, driverID: driverID)
        let current = try await proposals.adjustment(jobID)
        let max = paymentsConfig.maxAdjustmentExtensions
        guard let change = try proposals.change(current, .extend(by: driverID, maxExtensions: max)), let current else {
            throw DispatchError.noPendingAdjustment
        }
        let now = self.now
        let deadline = Swift.max(now, current.deadlineAt ?? now) + Int64(paymentsConfig.adjustmentExtensionSeconds) * 1000
        var reminder = current
        reminder.deadlineAt = deadline
        let prepared = await proposals.prepare(change, reminder)
        let extended = try await book.database.unitOfWork { work in
            try await self.proposals.commit(change, actorID: driverID, prepared: prepared, in: work, now: now) {
                let extended = try await self.proposals.store.extend(work.db, jobID: jobID, deadline: deadline, maxExtensions: max, now: now)
                return extended.map { PriceAdjustments.Committed(adjustment: $0) }
            }
        }
        guard extended != nil else {
            // Another extension or a decision won meanwhile.
            guard let fresh = try await proposals.adjustment(jobID), fresh.status == .pending else { throw DispatchError.noPendingAdjustment }
            throw DispatchError.extensionLimit(max)
        }
        return try await proposals.outcome(jobID)
    }

    /// `POST /drivers/jobs/{id}/cancel-with-trip-fee`: after an unanswered deadline, the
    /// driver ends the job and is paid the trip fee (so a silent customer never strands them).
    public func cancelWithTripFee(_ jobID: String, driverID: String) async throws -> AdjustmentOutcome {
        _ = try await book.assigned(jobID, driverID: driverID)
        let current = try await proposals.adjustment(jobID)
        let quote = try await tripFee(jobID)
        let event = AdjustmentLifecycle.Event.cancelWithTripFee(by: driverID, now: now, tripFeeMinor: quote.fee)
        guard let change = try proposals.change(current, event), let current else { return try await proposals.outcome(jobID) }
        guard try await endWithTripFee(current, change, quote, actorID: driverID, onlyAfterDeadline: true) != nil else {
            guard let fresh = try await proposals.adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
            if fresh.status == .cancelled && fresh.decidedBy == driverID { return try await proposals.outcome(jobID) }
            if fresh.status == .pending { throw DispatchError.notExpired(fresh) }
            throw DispatchError.alreadyDecided(fresh)
        }
        return try await proposals.outcome(jobID)
    }

    /// Tells drivers whose proposal's deadline passed (`volume:expired` and a push); returns how many.
    public func expireDueProposals(limit: Int = 100) async throws -> Int {
        let now = self.now
        let due = try await book.database.withConnection { db in try await self.proposals.store.dueExpiries(db, now: now, limit: limit) }
        var told = 0
        for proposal in due {
            let event = AdjustmentLifecycle.Event.deadlinePassed(
                now: now, maxExtensions: paymentsConfig.maxAdjustmentExtensions, tripFeeMinor: try await tripFee(proposal.jobID).fee)
            guard case .move(let change) = AdjustmentLifecycle.decide(proposal, event) else { continue }
            let prepared = await proposals.prepare(change, proposal)
            let marked = try await book.database.unitOfWork { work in
                try await self.proposals.commit(change, actorID: "system", prepared: prepared, in: work, now: now) {
                    guard try await self.proposals.store.markExpired(work.db, jobID: proposal.jobID, deadline: proposal.deadlineAt ?? 0, now: now) else {
                        return nil
                    }
                    return PriceAdjustments.Committed(adjustment: proposal)
                }
            }
            if marked != nil { told += 1 }
        }
        return told
    }
}
