import Foundation
import HeraldCore
import HeraldGeo
import HeraldStorage
import SQLKit
import Synchronization

/// Drivers: their profiles and approval, who is online, where each one is (the in-memory
/// index offer rounds and ride requests search) and the position reports that move them.
///
/// Why its own owner: a driver's record and position are read by jobs, offer rounds, the
/// feeds and the trips module, but changed only here; it owns the `drivers` table's store and
/// the tracker, and the rest of dispatch reads through it (issue 42, part 1).
public final class DriverDirectory: Sendable {
    let database: any Database
    let config: DispatchConfig
    /// The positions of this node's matchable drivers, and the writes not yet flushed.
    public let tracker: DriverTracker
    let statistics: DispatchStatistics
    let clock: any HeraldClock
    let store = DriverStore()
    private let locationObserver = Mutex<(any LocationObserver)?>(nil)

    init(database: any Database, config: DispatchConfig, tracker: DriverTracker, statistics: DispatchStatistics, clock: any HeraldClock) {
        self.database = database
        self.config = config
        self.tracker = tracker
        self.statistics = statistics
        self.clock = clock
    }

    var now: Int64 { clock.now().epochMilliseconds }

    /// Installs the observer of position reports (the trips module; its composition root).
    public func observeLocations(_ observer: any LocationObserver) {
        locationObserver.withLock { $0 = observer }
    }

    public func profile(_ userID: String) async throws -> DriverRecord? {
        try await database.withConnection { db in try await self.store.find(db, userID: userID) }
    }

    /// The driver's profile, or 404 `DRIVER_NOT_FOUND` (they must create one first).
    func requireProfile(_ userID: String) async throws -> DriverRecord {
        guard let record = try await profile(userID) else { throw DispatchError.driverNotFound }
        return record
    }

    /// Creates or updates the driver's own profile; a new profile waits for approval.
    public func saveProfile(_ userID: String, _ profile: DriverProfile) async throws -> DriverRecord {
        let now = self.now
        let record = try await database.transaction { db in try await self.store.upsert(db, userID: userID, profile: profile, now: now) }
        tracker.load(record)
        return record
    }

    /// An operator's verdict; a driver who is no longer approved drops out of matching at once.
    public func setApproval(_ userID: String, _ status: DriverApproval, reason: String?, by operatorID: String) async throws -> DriverRecord {
        let now = self.now
        guard
            let record = try await database.transaction({ db in
                try await self.store.setApproval(db, userID: userID, status: status, reason: reason, by: operatorID, now: now)
            })
        else {
            throw DispatchError.unknownDriver
        }
        tracker.load(record)
        return record
    }

    public func setOnline(_ userID: String, _ online: Bool) async throws -> DriverRecord {
        let now = self.now
        guard let record = try await database.transaction({ db in try await self.store.setOnline(db, userID: userID, online: online, now: now) }) else {
            throw DispatchError.driverNotFound
        }
        tracker.load(record)
        return record
    }

    /// Takes a position report (REST or socket). Returns whether it was newer than the last one.
    public func reportLocation(_ userID: String, _ update: LocationUpdate) async throws -> DriverTracker.LocationOutcome {
        let receivedAt = now
        let observer = locationObserver.withLock { $0 }
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
    public func nearby(_ point: GeoPoint, radiusMeters: Double, limit: Int) -> [DriverMatch] {
        let freshSince = now - Int64(config.locationMaxAgeSeconds) * 1000
        return tracker.index.nearest(to: point, radiusMeters: radiusMeters, limit: limit, freshSince: freshSince)
    }

    /// Rebuilds the index from the database (start-up): every approved, online driver.
    public func rebuildIndex() async throws -> Int {
        let records = try await database.withConnection { db in try await self.store.matchable(db) }
        for record in records { tracker.load(record) }
        return records.count
    }

    public func list(approval: DriverApproval?, online: Bool?, offset: Int, limit: Int) async throws -> (drivers: [DriverRecord], total: Int) {
        try await database.withConnection { db in try await self.store.list(db, approval: approval, online: online, offset: offset, limit: limit) }
    }

    // MARK: Inside another owner's transaction (jobs, offer rounds, the trips module)

    /// The driver's record (name, rating, approval), if they are one.
    public func record(_ db: any SQLDatabase, userID: String) async throws -> DriverRecord? {
        try await store.find(db, userID: userID)
    }

    /// Adds one rating (1–5) to the driver's average.
    public func addRating(_ db: any SQLDatabase, driverID: String, rating: Int) async throws {
        try await store.addRating(db, userID: driverID, rating: rating)
    }

    /// Counts a completed job into the driver's record.
    func recordCompletion(_ db: any SQLDatabase, userID: String, now: Int64) async throws {
        try await store.recordCompletion(db, userID: userID, now: now)
    }

    /// Every approved, online driver (a job without a position is offered to all of them).
    func matchable(_ db: any SQLDatabase) async throws -> [DriverRecord] {
        try await store.matchable(db)
    }

    /// Approved drivers' stored positions within a latitude band (a job's feed audience).
    func approvedPositions(_ db: any SQLDatabase, latitudeBand: (min: Double, max: Double)?) async throws -> [DriverRecord] {
        try await store.approvedPositions(db, latitudeBand: latitudeBand)
    }
}
