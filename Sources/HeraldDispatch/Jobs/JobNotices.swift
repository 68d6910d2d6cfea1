import HeraldCore
import HeraldNotifications

/// The text of every job notification: what the customer hears at each status, and what the
/// other party hears when a job is cancelled under them.
///
/// Why in one place: the claim, the driver's steps, expiry and every cancel tell people about
/// a job; their titles, bodies, tap data (`{"job_id", "type": "job_update"}`, which the apps
/// route) and collapse keys must agree.
enum JobNotices {
    /// The drafts for `notice` about `job` (after its change; `driverName` for the customer's texts).
    static func drafts(_ notice: JobNotice, job: JobRecord, driverName: String?) -> [NotificationDraft] {
        let id = job.id
        switch notice {
        case .status(let status):
            guard let message = customerMessage(status, driverName: driverName) else { return [] }
            let extra: [String: JSONValue] = status == .accepted ? ["driver_id": job.driverID.map(JSONValue.string) ?? .null] : [:]
            // An operator's cancel is a one-off; the steps replace each other on the lock screen.
            return [
                NotificationDraft(
                    userIDs: [job.customerID], type: message.type, title: message.title, body: message.body,
                    data: jobUpdateData(id, status, extra), collapseKey: status == .cancelled ? nil : "job-\(id)")
            ]
        case .cancelledByCustomer:
            guard let driverID = job.driverID else { return [] }
            return [
                NotificationDraft(
                    userIDs: [driverID], type: "job_update", title: "Job cancelled", body: "The customer cancelled the job at \(job.address).",
                    data: jobUpdateData(id, .cancelled))
            ]
        case .paymentDeclined:
            let data = jobUpdateData(id, .cancelled, ["reason": .string(JobTransitions.paymentDeclined)])
            var drafts = [
                NotificationDraft(
                    userIDs: [job.customerID], type: "job_update", title: "Booking cancelled",
                    body: "Your card was declined for the job at \(job.address), so it was cancelled. Please book again with another card.",
                    data: data, collapseKey: "job-\(id)")
            ]
            if let driverID = job.driverID {
                drafts.append(
                    NotificationDraft(
                        userIDs: [driverID], type: "job_update", title: "Job cancelled",
                        body: "The job at \(job.address) was cancelled: the customer's payment failed.", data: data))
            }
            return drafts
        case .decision:
            return []  // the price adjustment writes its own
        }
    }

    /// A job-status push's data as the dispatch design sends it (`{"job_id", "type": "job_update"}`, to
    /// which the apps route a tap), with the status beside it.
    static func jobUpdateData(_ jobID: String, _ status: JobStatus, _ extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var data: [String: JSONValue] = ["job_id": .string(jobID), "type": "job_update", "status": .string(status.rawValue)]
        data.merge(extra) { _, new in new }
        return data
    }

    /// What the customer is told about each status (nil: nothing).
    static func customerMessage(_ status: JobStatus, driverName: String?) -> (type: String, title: String, body: String)? {
        let name = driverName ?? "Your driver"
        switch status {
        case .accepted: return ("driver_assigned", "Driver Assigned", "\(name) has accepted your job.")
        case .enRoute: return ("job_update", "Driver on the way", "\(name) is on the way.")
        case .arrived: return ("job_update", "Driver arrived", "\(name) has arrived.")
        case .started: return ("job_update", "Job started", "\(name) has started the job.")
        case .completed: return ("job_update", "Job completed", "Your job is complete. Thank you!")
        case .cancelled: return ("job_update", "Job cancelled", "Your job was cancelled.")
        case .expired: return ("job_update", "No driver available", "No driver accepted your job in time. Please book again.")
        case .pending: return nil
        }
    }
}
