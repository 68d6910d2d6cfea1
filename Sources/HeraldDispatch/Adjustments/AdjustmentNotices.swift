import HeraldCore
import HeraldNotifications
import HeraldRealtime

/// The texts and socket events of a price adjustment's changes, in one place (as
/// `JobNotices` for the job's): what `AdjustmentLifecycle`'s notices and announcements say.
enum AdjustmentNotices {
    /// The notification for `notice` about `a` (as it stands after the change).
    static func draft(_ notice: AdjustmentNotice, _ a: AdjustmentRecord) -> NotificationDraft {
        let jobID = a.jobID
        let newPrice = DisplayFormat.money(a.newPriceMinor, currency: a.currency)
        switch notice {
        case .proposal(let reminder):
            return NotificationDraft(
                userIDs: [a.customerID], type: "volume_adjustment", title: reminder ? "Reminder: Price Adjustment Required" : "Price Adjustment Required",
                body: "Volume increased to \(DisplayFormat.yards(a.actualVolumeHundredths)) cu yd. New price: \(newPrice)",
                data: [
                    "job_id": .string(jobID), "new_price": .number(Double(a.newPriceMinor) / 100), "new_price_minor": .number(Double(a.newPriceMinor)),
                    "currency": .string(a.currency), "actual_volume": .number(DisplayFormat.yardsValue(a.actualVolumeHundredths)),
                    "deadline_at": DispatchJSON.time(a.deadlineAt), "actions": ["APPROVE_VOLUME", "DECLINE_VOLUME"],
                ],
                category: "VOLUME_ADJUSTMENT", threadID: "job-\(jobID)", collapseKey: "volume-\(jobID)")
        case .lowered:
            return NotificationDraft(
                userIDs: [a.customerID], type: "job_update", title: "Good news: lower price",
                body: "Volume adjusted to \(DisplayFormat.yards(a.actualVolumeHundredths)) cu yd. New price: \(newPrice)",
                data: [
                    "job_id": .string(jobID), "new_price_minor": .number(Double(a.newPriceMinor)), "currency": .string(a.currency), "event": "volume_lowered",
                ],
                collapseKey: "job-\(jobID)")
        case .approved:
            return NotificationDraft(
                userIDs: [a.driverID], type: "job_update", title: "New price approved", body: "The customer approved \(newPrice). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_approved"], collapseKey: "volume-\(jobID)")
        case .declined(let fee):
            return NotificationDraft(
                userIDs: [a.driverID], type: "job_update", title: "Customer declined the new price",
                body: "The job is cancelled; you get the \(DisplayFormat.money(fee, currency: a.currency)) trip fee.",
                data: ["job_id": .string(jobID), "event": "volume_declined"], collapseKey: "volume-\(jobID)")
        case .declinedToProceed:
            return NotificationDraft(
                userIDs: [a.driverID], type: "job_update", title: "Proceed at the original price",
                body: "The customer declined \(newPrice) and keeps \(DisplayFormat.money(a.originalPriceMinor, currency: a.currency)). You can start.",
                data: ["job_id": .string(jobID), "event": "volume_declined_proceed"], collapseKey: "volume-\(jobID)")
        case .leftUnanswered(let fee):
            return NotificationDraft(
                userIDs: [a.customerID], type: "job_update", title: "Job cancelled",
                body: "You did not answer the new price, so the driver left. A \(DisplayFormat.money(fee, currency: a.currency)) trip fee applies.",
                data: ["job_id": .string(jobID), "status": "cancelled", "event": "trip_fee"], collapseKey: "job-\(jobID)")
        case .deadlinePassed(let left):
            return NotificationDraft(
                userIDs: [a.driverID], type: "job_update", title: "No answer from the customer",
                body: left > 0
                    ? "The customer hasn't responded. Call them, wait longer, or cancel with the trip fee."
                    : "The customer hasn't responded. Call them or cancel with the trip fee.",
                data: ["job_id": .string(jobID), "event": "volume_expired"], collapseKey: "volume-\(jobID)")
        }
    }

    /// The socket events for `announcement` about `a` (and its job, as the change left it).
    static func events(_ announcement: AdjustmentAnnouncement, _ a: AdjustmentRecord, job: JobRecord?) -> [(
        name: String, payload: JSONValue, room: String
    )] {
        let customer = RoomName.user(a.customerID)
        let driver = DispatchService.driverRoom(a.driverID)
        let payload = JSONValue.object(DispatchJSON.adjustmentEvent(a))
        switch announcement {
        case .proposed: return [("volume:proposed", payload, customer), ("volume:proposed", payload, driver)]
        case .approved: return [("volume:approved", payload, driver), ("volume:approved", payload, customer)]
        case .extended: return [("volume:proposed", payload, customer), ("volume:extended", payload, driver)]
        case .declined(let proceed):
            var declined: [String: JSONValue] = [
                "job_id": .string(a.jobID), "currency": .string(a.currency), "proceed_at_original_price": .bool(proceed),
                "trip_fee": .number(Double(a.tripFeeMinor ?? 0) / 100), "trip_fee_minor": .number(Double(a.tripFeeMinor ?? 0)),
            ]
            if proceed, let job { declined["price_minor"] = .number(Double(job.priceMinor)) }
            return [("volume:declined", .object(declined), driver)]
        case .deadlinePassed(let left, let fee):
            var expired = DispatchJSON.adjustmentEvent(a)
            expired["extensions_left"] = .number(Double(left))
            expired["trip_fee_minor"] = .number(Double(fee))
            return [("volume:expired", .object(expired), driver)]
        }
    }
}
