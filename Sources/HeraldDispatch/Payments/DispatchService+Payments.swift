import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPayments
import SQLKit

extension DispatchService {
    /// Makes the job's owed payment call; a scheduled hold the card refuses cancels the job.
    func settlePayment(_ jobID: String) async {
        if case .holdRefused(let error) = await payments.settle(jobID) { await cancelUnpaid(jobID, error) }
    }

    /// The payment calls that are due (retries and scheduled holds); returns how many were made.
    public func runDuePayments(limit: Int = 50) async throws -> Int {
        let outcomes = try await payments.runDue(limit: limit)
        for (jobID, settled) in outcomes {
            if case .holdRefused(let error) = settled { await cancelUnpaid(jobID, error) }
        }
        return outcomes.count
    }

    /// A job booked ahead whose hold the card refused when it was due: nothing could pay for
    /// it, so it is cancelled (by the system, reason `payment_declined`) before anyone works
    /// on it, and the customer is told to book again with another card. A job already started
    /// or finished is not undone: its payment stays failed for operators (`payment.last_error`).
    func cancelUnpaid(_ jobID: String, _ error: PaymentError) async {
        do {
            guard let job = try await database.withConnection({ db in try await self.jobs.find(db, id: jobID) }) else { return }
            let current = job.jobStatus
            guard case .allowed = JobStateMachine.check(from: current, to: .cancelled, by: .system) else {
                logger.error("a scheduled payment hold was refused after the job began", metadata: [
                    "job_id": "\(jobID)", "status": "\(current.rawValue)", "code": "\(error.code)",
                ])
                return
            }
            let reason = "payment_declined"
            let data = Self.jobUpdateData(jobID, .cancelled, ["reason": .string(reason)])
            var drafts = [NotificationDraft(
                userIDs: [job.customerID], type: "job_update", title: "Booking cancelled",
                body: "Your card was declined for the job at \(job.address), so it was cancelled. Please book again with another card.",
                data: data, collapseKey: "job-\(jobID)")]
            if let driverID = job.driverID {
                drafts.append(NotificationDraft(
                    userIDs: [driverID], type: "job_update", title: "Job cancelled",
                    body: "The job at \(job.address) was cancelled: the customer's payment failed.", data: data))
            }
            var ready: [NotificationService.PreparedSend] = []
            for draft in drafts { if let send = await prepareNotification(draft) { ready.append(send) } }
            let prepared = ready
            let now = self.now
            let driver = try await job.driverID.asyncMap { id in try await self.database.withConnection { db in try await self.drivers.find(db, userID: id) } } ?? nil
            let cancelled = try await database.unitOfWork { work -> Bool in
                let db = work.db
                guard let updated = try await self.jobs.transition(
                    db, id: jobID, from: current, to: .cancelled, driverID: nil, now: now, cancelledBy: JobActor.system.rawValue, reason: reason)
                else { return false }
                try await self.jobs.recordEvent(db, jobID: jobID, from: current, to: .cancelled, actorID: nil, actor: .system, reason: reason, now: now)
                try await self.offers.decide(db, jobID: jobID, winner: nil, outcome: "cancelled")
                _ = try await self.adjustments.decide(db, jobID: jobID, to: .cancelled, by: JobActor.system.rawValue, tripFeeMinor: nil, now: now)
                try await self.holds.plan(db, jobID: jobID, .cancel, now: now)
                let offered = try await self.offers.driverIDs(db, jobID: jobID)
                work.afterCommit {
                    await self.announce(updated, previous: current, driver: driver, offeredDrivers: offered)
                    await self.settlePayment(jobID)
                }
                for send in prepared { try await self.notifications.write(send, in: work) }
                return true
            }
            // Changed meanwhile (the customer cancelled): nothing left to do here.
            guard cancelled else { return }
            logger.warning("job cancelled: its scheduled payment hold was refused", metadata: ["job_id": "\(jobID)", "code": "\(error.code)"])
        } catch {
            logger.error("cancelling a job whose payment hold was refused failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
        }
    }
}
