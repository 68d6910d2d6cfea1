import Foundation
import HeraldCore
import HeraldNotifications
import HeraldRealtime
import HeraldStorage

extension DispatchService {
    /// The first-come claim, without the double accept the dispatch design warns of.
    ///
    /// One conditional UPDATE … RETURNING decides: 200 with the job for the winner (again
    /// for the winner's repeats), 409 `JOB_ALREADY_ACCEPTED` for everyone else, 409
    /// `JOB_NOT_AVAILABLE` for a cancelled or expired job, 403 for a driver who is not
    /// approved, 404 for an unknown job. The customer's notification commits with the claim;
    /// the socket events follow it.
    public func accept(_ jobID: String, driverID: String) async throws -> (job: JobRecord, driver: DriverRecord) {
        let driver = try await drivers.requireProfile(driverID)
        guard driver.approval == .approved else { throw DispatchError.notApproved(driver.approval) }
        guard let before = try await database.withConnection({ db in try await self.jobs.find(db, id: jobID) }) else {
            throw DispatchError.jobNotFound
        }
        do {
            if let settled = try Self.settled(before, for: driverID) { return (settled, driver) }
        } catch {
            statistics.claimed(won: false)
            throw error
        }
        let now = self.now
        let message = Self.customerMessage(.accepted, driverName: driver.name)!
        let draft = NotificationDraft(
            userIDs: [before.customerID], type: message.type, title: message.title, body: message.body,
            data: Self.jobUpdateData(jobID, .accepted, ["driver_id": .string(driverID)]), collapseKey: "job-\(jobID)")
        let result = try await database.unitOfWork { work -> JobRecord? in
            let db = work.db
            guard let claimed = try await self.jobs.claim(db, id: jobID, driverID: driverID, now: now) else { return nil }
            // Only the winner routes the customer's notification (the losers of a race of
            // hundreds stop at the UPDATE); read through the transaction's connection.
            let prepared = try await self.notifications.prepare(draft, in: db)
            try await self.jobs.recordEvent(db, jobID: jobID, from: .pending, to: .accepted, actorID: driverID, actor: .driver, now: now)
            try await self.offers.decide(db, jobID: jobID, winner: driverID, outcome: .lost)
            let offered = try await self.offers.driverIDs(db, jobID: jobID)
            work.afterCommit {
                await self.addToRoom([driverID], RoomName.job(jobID))
                // The customer hears who is coming first; then the feeds of the other offered drivers.
                await self.publish("job:driver-assigned", ["job_id": .string(jobID), "driver": DispatchJSON.driverSummary(driver)], to: RoomName.job(jobID))
                await self.announce(claimed, previous: .pending, driver: driver, offeredDrivers: offered)
            }
            try await self.notifications.write(prepared, in: work)
            try await self.publishActivity(JobActivity.change(claimed, driverName: driver.name), in: work)
            if let activities = self.liveActivities, try await activities.start(JobActivity.start(claimed, driverName: driver.name), in: db) > 0 {
                work.afterCommit { activities.wake() }
            }
            return claimed
        }
        statistics.claimed(won: result != nil)
        guard let job = result else {
            // Lost the race (or the job changed): answer from what won.
            guard let after = try await database.withConnection({ db in try await self.jobs.find(db, id: jobID) }) else { throw DispatchError.jobNotFound }
            if let settled = try Self.settled(after, for: driverID) { return (settled, driver) }
            throw DispatchError.alreadyAccepted
        }
        return (job, driver)
    }

    /// The answer for a job that is no longer pending: the winner's repeat gets the job,
    /// others a 409; nil while the job can still be claimed.
    static func settled(_ job: JobRecord, for driverID: String) throws -> JobRecord? {
        let status = job.status
        if status == .pending && job.driverID == nil { return nil }
        if job.driverID == driverID && status != .cancelled && status != .expired { return job }
        if status == .cancelled || status == .expired { throw DispatchError.notAvailable(status) }
        throw DispatchError.alreadyAccepted
    }
}
