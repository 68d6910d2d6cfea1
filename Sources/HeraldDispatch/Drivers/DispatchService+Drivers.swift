import Foundation
import HeraldCore
import HeraldGeo

extension DispatchService {
    public func profile(_ userID: String) async throws -> DriverRecord? {
        try await database.withConnection { db in try await self.drivers.find(db, userID: userID) }
    }

    /// The driver's profile, or 404 `DRIVER_NOT_FOUND` (they must create one first).
    func requireProfile(_ userID: String) async throws -> DriverRecord {
        guard let record = try await profile(userID) else { throw DispatchError.driverNotFound }
        return record
    }

    /// Creates or updates the driver's own profile; a new profile waits for approval.
    public func saveProfile(_ userID: String, _ profile: DriverProfile) async throws -> DriverRecord {
        let now = self.now
        let record = try await database.transaction { db in try await self.drivers.upsert(db, userID: userID, profile: profile, now: now) }
        tracker.load(record)
        return record
    }

    /// An operator's verdict; a driver who is no longer approved drops out of matching at once.
    public func setApproval(_ userID: String, _ status: DriverApproval, reason: String?, by operatorID: String) async throws -> DriverRecord {
        let now = self.now
        guard
            let record = try await database.transaction({ db in
                try await self.drivers.setApproval(db, userID: userID, status: status, reason: reason, by: operatorID, now: now)
            })
        else {
            throw DispatchError.unknownDriver
        }
        tracker.load(record)
        return record
    }

    public func setOnline(_ userID: String, _ online: Bool) async throws -> DriverRecord {
        let now = self.now
        guard let record = try await database.transaction({ db in try await self.drivers.setOnline(db, userID: userID, online: online, now: now) }) else {
            throw DispatchError.driverNotFound
        }
        tracker.load(record)
        return record
    }

    /// Takes a position report (REST or socket). Returns whether it was newer than the last one.
    public func reportLocation(_ userID: String, _ update: LocationUpdate) async throws -> DriverTracker.LocationOutcome {
        let receivedAt = now
        let observer = currentLocationObserver
        if let observer, let throttle = await observer.admit(driverID: userID, receivedAt: receivedAt) {
            statistics.location(.throttled(throttle), update: update, receivedAt: receivedAt)
            return .throttled(throttle)
        }
        var outcome = tracker.apply(userID, update, receivedAt: receivedAt)
        if outcome == .unknownDriver {
            // The profile may have been made on another node moments ago.
            do {
                let record = try await requireProfile(userID)
                tracker.load(record)
            } catch {
                statistics.location(.unknownDriver, update: update, receivedAt: receivedAt)
                throw error
            }
            outcome = tracker.apply(userID, update, receivedAt: receivedAt)
        }
        statistics.location(outcome, update: update, receivedAt: receivedAt)
        if outcome == .unknownDriver { throw DispatchError.driverNotFound }
        if outcome == .accepted, let observer { await observer.accepted(driverID: userID, update: update, receivedAt: receivedAt) }
        return outcome
    }

    /// Matchable drivers within `radiusMeters` of `point`, nearest first.
    public func nearbyDrivers(_ point: GeoPoint, radiusMeters: Double, limit: Int) -> [DriverMatch] {
        let freshSince = now - Int64(config.locationMaxAgeSeconds) * 1000
        return tracker.index.nearest(to: point, radiusMeters: radiusMeters, limit: limit, freshSince: freshSince)
    }

    /// How far a driver's feed reaches (`feed_radius_km`, else the widest offer round).
    var feedRadiusMeters: Double { (config.feedRadiusKm ?? config.maxRadiusKm) * 1000 }

    /// Open jobs within the driver's feed radius, nearest first; jobs without a position last.
    public func availableJobs(for driverID: String, limit: Int = 50) async throws -> [(job: JobRecord, distance: Double?)] {
        let driver = try await requireProfile(driverID)
        guard driver.approval == .approved else { throw DispatchError.notApproved(driver.approval) }
        guard let position = tracker.index.position(of: driverID)?.point ?? driver.point else { throw DispatchError.locationRequired }
        let radius = feedRadiusMeters
        let degrees = radius / 111_000
        let candidates = try await database.withConnection { db in
            try await self.jobs.openJobs(db, minLatitude: position.latitude - degrees, maxLatitude: position.latitude + degrees, limit: 2000)
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

    /// Rebuilds the index from the database (start-up): every approved, online driver.
    public func rebuildIndex() async throws -> Int {
        let records = try await database.withConnection { db in try await self.drivers.matchable(db) }
        for record in records { tracker.load(record) }
        return records.count
    }
}

extension DispatchService {
    public func listDrivers(approval: DriverApproval?, online: Bool?, offset: Int, limit: Int) async throws -> (drivers: [DriverRecord], total: Int) {
        try await database.withConnection { db in try await self.drivers.list(db, approval: approval, online: online, offset: offset, limit: limit) }
    }
}
