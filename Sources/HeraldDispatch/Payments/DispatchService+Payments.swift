import Foundation
import HeraldAuth
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
            let (job, driver) = try await self.job(jobID, for: Identity(userID: JobActor.system.rawValue, role: .service, expiresAt: .infinity))
            let current = job.status
            guard case .allowed = JobStateMachine.check(from: current, to: .cancelled, by: .system) else {
                logger.error(
                    "a scheduled payment hold was refused after the job began",
                    metadata: [
                        "job_id": "\(jobID)", "status": "\(current.rawValue)", "code": "\(error.code)",
                    ])
                return
            }
            let reason = "payment_declined"
            let data = Self.jobUpdateData(jobID, .cancelled, ["reason": .string(reason)])
            var drafts = [
                NotificationDraft(
                    userIDs: [job.customerID], type: "job_update", title: "Booking cancelled",
                    body: "Your card was declined for the job at \(job.address), so it was cancelled. Please book again with another card.",
                    data: data, collapseKey: "job-\(jobID)")
            ]
            if let driverID = job.driverID {
                drafts.append(
                    NotificationDraft(
                        userIDs: [driverID], type: "job_update", title: "Job cancelled",
                        body: "The job at \(job.address) was cancelled: the customer's payment failed.", data: data))
            }
            var ready: [NotificationService.PreparedSend] = []
            for draft in drafts { if let send = await prepareNotification(draft) { ready.append(send) } }
            let cancelled = try await commitCancel(
                jobID, from: current, actor: .system, actorID: nil, reason: reason, driver: driver, notify: ready, now: self.now)
            // Changed meanwhile (the customer cancelled): nothing left to do here.
            guard cancelled != nil else { return }
            logger.warning("job cancelled: its scheduled payment hold was refused", metadata: ["job_id": "\(jobID)", "code": "\(error.code)"])
        } catch {
            logger.error("cancelling a job whose payment hold was refused failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
        }
    }
}
