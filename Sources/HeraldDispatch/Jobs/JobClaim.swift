import Foundation
import HeraldCore
import HeraldNotifications
import HeraldStorage

/// The first-come claim, without the double accept the dispatch design warns of.
///
/// Why one conditional UPDATE … RETURNING decides: hundreds of drivers may tap at once; the
/// database lets exactly one win, and everyone else stops there without routing the
/// customer's notification or touching the offers.
public final class JobClaim: Sendable {
    let book: JobBook
    let transitions: JobTransitions
    let statistics: DispatchStatistics

    init(book: JobBook, transitions: JobTransitions, statistics: DispatchStatistics) {
        self.book = book
        self.transitions = transitions
        self.statistics = statistics
    }

    /// 200 with the job for the winner (again for the winner's repeats), 409
    /// `JOB_ALREADY_ACCEPTED` for everyone else, 409 `JOB_NOT_AVAILABLE` for a cancelled or
    /// expired job, 403 for a driver who is not approved, 404 for an unknown job. The
    /// customer's notification commits with the claim; the socket events follow it.
    public func accept(_ jobID: String, driverID: String) async throws -> (job: JobRecord, driver: DriverRecord) {
        let driver = try await book.drivers.requireProfile(driverID)
        guard driver.approval == .approved else { throw DispatchError.notApproved(driver.approval) }
        guard let before = try await book.find(jobID) else { throw DispatchError.jobNotFound }
        do {
            if let settled = try Self.settled(before, for: driverID) { return (settled, driver) }
        } catch {
            statistics.claimed(won: false)
            throw error
        }
        guard case .move(let transition) = JobLifecycle.decide(before, .claim(driverID: driverID)) else { throw DispatchError.alreadyAccepted }
        var claimedView = before
        claimedView.driverID = driverID
        let drafts = transitions.drafts(transition, job: claimedView, driverName: driver.name)
        let now = transitions.now
        let result = try await book.database.unitOfWork { work -> JobRecord? in
            let db = work.db
            guard let claimed = try await self.book.store.claim(db, id: jobID, driverID: driverID, now: now) else { return nil }
            // Only the winner routes the customer's notification (the losers of a race of
            // hundreds stop at the UPDATE); read through the transaction's connection.
            var prepared: [NotificationService.PreparedSend] = []
            for draft in drafts { prepared.append(try await self.transitions.notifier.notifications.prepare(draft, in: db)) }
            return try await self.transitions.commit(
                transition, jobID: jobID, actorID: driverID, driver: driver, prepared: prepared, in: work, now: now
            ) { claimed }
        }
        statistics.claimed(won: result != nil)
        guard let job = result else {
            // Lost the race (or the job changed): answer from what won.
            guard let after = try await book.find(jobID) else { throw DispatchError.jobNotFound }
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
