import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import SQLKit

/// A dispatch job's Live Activity: what its attributes and content state hold, and which job
/// changes reach it how (`docs/live-activities.md`).
///
/// Content state (`JobActivityAttributes.ContentState` in HeraldClient):
/// `{job_id, status, driver_name}`. Every status change is important (priority 10); the
/// driver's arrival and a cancellation or expiry carry an alert; completion, cancellation
/// and expiry end it.
public enum JobActivity {
    public static func attributes(_ job: JobRecord) -> [String: JSONValue] {
        ["job_id": .string(job.id), "address": .string(job.address)]
    }

    public static func content(_ job: JobRecord, driverName: String?) -> [String: JSONValue] {
        [
            "job_id": .string(job.id), "status": .string(job.status.rawValue),
            "driver_name": firstName(driverName).map(JSONValue.string) ?? .null,
        ]
    }

    /// The start push at the claim, to the customer's push-to-start tokens.
    public static func start(_ job: JobRecord, driverName: String?) -> LiveActivityStart {
        let name = firstName(driverName) ?? "Your driver"
        return LiveActivityStart(
            kind: .job, subjectID: job.id, userIDs: [job.customerID], attributes: attributes(job), content: content(job, driverName: driverName),
            alert: LiveActivityAlert(title: "Driver assigned", body: "\(name) has accepted your job."))
    }

    /// What the activity calls the driver (as the trip's does).
    static func firstName(_ name: String?) -> String? { name?.split(separator: " ").first.map(String.init) }

    /// A status change: the new status (and the driver, once one is assigned).
    public static func change(_ job: JobRecord, driverName: String?) -> LiveActivityChange {
        var patch: [String: JSONValue] = ["status": .string(job.status.rawValue)]
        if let driverName { patch["driver_name"] = content(job, driverName: driverName)["driver_name"] }
        let alert: LiveActivityAlert? =
            switch job.status {
            case .arrived:
                LiveActivityAlert(
                    title: "Driver arrived", body: "\(firstName(driverName) ?? "Your driver") has arrived.")
            case .cancelled: LiveActivityAlert(title: "Job cancelled", body: "Your job was cancelled.")
            case .expired: LiveActivityAlert(title: "No driver available", body: "No driver accepted your job in time.")
            default: nil
            }
        return LiveActivityChange(kind: .job, subjectID: job.id, patch: patch, important: true, alert: alert, ends: job.status.isFinal)
    }
}

/// The dispatch module's answer to an activity registration: the job's customer and its
/// assigned driver may follow it.
struct JobActivitySource: LiveActivitySource {
    let book: JobBook

    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        let found = try await book.database.withConnection { db -> (JobRecord, String?)? in
            guard let job = try await book.store.find(db, id: subjectID), job.customerID == userID || job.driverID == userID else { return nil }
            let driver = try await job.driverID.asyncMap { try await book.drivers.record(db, userID: $0) } ?? nil
            return (job, driver?.name)
        }
        guard let (job, name) = found else { return nil }
        return LiveActivitySnapshot(content: JobActivity.content(job, driverName: name), ended: job.status.isFinal)
    }
}

extension DispatchService {
    /// The dispatch module's source of job activities (registered in the composition root).
    public var liveActivitySource: any LiveActivitySource { JobActivitySource(book: jobs) }
}
