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
        guard let current = try await proposals.adjustment(jobID), current.status == .pending else { throw DispatchError.noPendingAdjustment }
        let now = self.now
        let deadline = max(now, current.deadlineAt ?? now) + Int64(paymentsConfig.adjustmentExtensionSeconds) * 1000
        let max = paymentsConfig.maxAdjustmentExtensions
        var reminder = current
        reminder.deadlineAt = deadline
        let prepared = await notifier.prepare(proposals.proposalNotification(reminder, reminder: true))
        let extended = try await book.database.unitOfWork { work -> Bool in
            guard let extended = try await self.proposals.store.extend(work.db, jobID: jobID, deadline: deadline, maxExtensions: max, now: now) else {
                return false
            }
            let payload = JSONValue.object(DispatchJSON.adjustmentEvent(extended))
            work.afterCommit {
                self.deadlinesChanged.signal()
                await self.notifier.publish(batch: [
                    ("volume:proposed", payload, RoomName.user(extended.customerID)), ("volume:extended", payload, DispatchService.driverRoom(driverID)),
                ])
            }
            try await self.notifier.write(prepared, in: work)
            return true
        }
        guard extended else {
            guard let fresh = try await proposals.adjustment(jobID), fresh.status == .pending else { throw DispatchError.noPendingAdjustment }
            throw DispatchError.extensionLimit(max)
        }
        return try await proposals.outcome(jobID)
    }

    /// `POST /drivers/jobs/{id}/cancel-with-trip-fee`: after an unanswered deadline, the
    /// driver ends the job and is paid the trip fee (so a silent customer never strands them).
    public func cancelWithTripFee(_ jobID: String, driverID: String) async throws -> AdjustmentOutcome {
        _ = try await book.assigned(jobID, driverID: driverID)
        guard let current = try await proposals.adjustment(jobID) else { throw DispatchError.noPendingAdjustment }
        switch current.status {
        case .cancelled where current.decidedBy == driverID: return try await proposals.outcome(jobID)
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
            let extensionsLeft = Swift.max(0, paymentsConfig.maxAdjustmentExtensions - proposal.extensions)
            let prepared = await notifier.prepare(
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
            let marked = try await book.database.unitOfWork { work -> Bool in
                guard try await self.proposals.store.markExpired(work.db, jobID: proposal.jobID, deadline: proposal.deadlineAt ?? 0, now: now) else {
                    return false
                }
                work.afterCommit { await self.notifier.publish("volume:expired", event, to: DispatchService.driverRoom(proposal.driverID)) }
                try await self.notifier.write(prepared, in: work)
                return true
            }
            if marked { told += 1 }
        }
        return told
    }
}
