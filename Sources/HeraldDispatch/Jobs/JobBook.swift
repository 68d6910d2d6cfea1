import Foundation
import HeraldAuth
import HeraldCore
import HeraldGeo
import HeraldStorage
import SQLKit

/// The jobs as their parties and operators read them: one job if the reader may see it, a
/// party's list, a driver's feed, the events of a job, the console's view.
///
/// Why reads apart from changes: every change (`JobTransitions`, `JobClaim`, offer rounds,
/// price adjustments) needs to find a job and check who may see it; this is the one place
/// that answers, with the same 404 for a job that is missing and one that is not yours.
public final class JobBook: Sendable {
    let database: any Database
    let drivers: DriverDirectory
    let config: DispatchConfig
    /// The `jobs` and `job_events` tables.
    let store = JobStore()
    let offers = OfferStore()

    init(database: any Database, drivers: DriverDirectory, config: DispatchConfig) {
        self.database = database
        self.drivers = drivers
        self.config = config
    }

    /// The job if `identity` may see it: its customer, its driver, a driver it was offered
    /// to, or an operator/service. Anyone else gets the same 404 as for a missing job.
    public func job(_ id: String, for identity: Identity) async throws -> (job: JobRecord, driver: DriverRecord?) {
        let found = try await database.withConnection { db -> (JobRecord, DriverRecord?, Bool)? in
            guard let job = try await self.store.find(db, id: id) else { return nil }
            let driver = try await job.driverID.asyncMap { try await self.drivers.record(db, userID: $0) } ?? nil
            let offered =
                identity.role == .driver && job.driverID != identity.userID
                ? try await self.offers.wasOffered(db, jobID: id, driverID: identity.userID) : false
            return (job, driver, offered)
        }
        guard let (job, driver, offered) = found else { throw DispatchError.jobNotFound }
        let allowed: Bool =
            switch identity.role {
            case .operator, .service: true
            case .customer: job.customerID == identity.userID
            case .driver: job.driverID == identity.userID || (offered && job.status == .pending)
            }
        guard allowed else { throw DispatchError.jobNotFound }
        return (job, driver)
    }

    /// The job as it is now (no access check: for flows that checked already).
    func find(_ id: String) async throws -> JobRecord? {
        try await database.withConnection { db in try await self.store.find(db, id: id) }
    }

    /// The job if `driverID` is its driver (anyone else: 404).
    func assigned(_ jobID: String, driverID: String) async throws -> JobRecord {
        guard let job = try await find(jobID), job.driverID == driverID else { throw DispatchError.jobNotFound }
        return job
    }

    /// The customer's name and phone for the driver assigned to the job while it is active
    /// (an unanswered price proposal leaves the driver the option to call); nil for
    /// anyone else and once the job is over, so a driver keeps no customer's number.
    public func customerContact(_ job: JobRecord, for identity: Identity) async throws -> JSONValue? {
        let active: Set<JobStatus> = [.accepted, .enRoute, .arrived, .started]
        guard identity.role == .driver, job.driverID == identity.userID, active.contains(job.status) else { return nil }
        let user = try await database.withConnection { db in try await UserDirectory.find(db, id: job.customerID) }
        return [
            "id": .string(job.customerID), "name": user?.displayName.map(JSONValue.string) ?? .null,
            "phone": user?.phone.map(JSONValue.string) ?? .null,
        ]
    }

    public func list(for identity: Identity, status: JobStatus?, offset: Int, limit: Int) async throws -> (jobs: [JobRecord], total: Int) {
        let owner: JobStore.Owner =
            switch identity.role {
            case .customer: .customer(identity.userID)
            case .driver: .driver(identity.userID)
            case .operator, .service: .anyone
            }
        return try await database.withConnection { db in try await self.store.list(db, owner: owner, status: status, offset: offset, limit: limit) }
    }

    public func events(_ jobID: String) async throws -> [JobEventRecord] {
        try await database.withConnection { db in try await self.store.events(db, jobID: jobID) }
    }

    /// Jobs not over that `userID` booked or drives.
    public func activeJobIDs(_ userID: String) async throws -> [String] {
        try await database.withConnection { db in try await self.store.activeJobIDs(db, userID: userID) }
    }

    /// Whether the user is the job's customer or its driver.
    public func isParticipant(_ userID: String, jobID: String) async throws -> Bool {
        guard let job = try await find(jobID) else { return false }
        return job.customerID == userID || job.driverID == userID
    }

    /// Open jobs within the driver's feed radius (`feed_radius_km`, else the widest offer
    /// round), nearest first; jobs without a position last.
    public func availableJobs(for driverID: String, limit: Int = 50) async throws -> [(job: JobRecord, distance: Double?)] {
        let driver = try await drivers.requireProfile(driverID)
        guard driver.approval == .approved else { throw DispatchError.notApproved(driver.approval) }
        guard let position = drivers.tracker.index.position(of: driverID)?.point ?? driver.point else { throw DispatchError.locationRequired }
        let radius = config.feedRadiusMeters
        let degrees = radius / 111_000
        let candidates = try await database.withConnection { db in
            try await self.store.openJobs(db, minLatitude: position.latitude - degrees, maxLatitude: position.latitude + degrees, limit: 2000)
        }
        var located: [(JobRecord, Double?)] = []
        var unlocated: [(JobRecord, Double?)] = []
        for job in candidates {
            if let point = job.point {
                let distance = Haversine.distanceMeters(position, point)
                if distance <= radius { located.append((job, distance)) }
            } else {
                unlocated.append((job, nil))
            }
        }
        located.sort { ($0.1 ?? 0, $0.0.id) < ($1.1 ?? 0, $1.0.id) }
        return Array((located + unlocated).prefix(limit))
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
