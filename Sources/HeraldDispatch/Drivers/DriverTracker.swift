import HeraldGeo
import Synchronization

/// What this node knows about every driver right now: who may be matched, where each one
/// is, and which positions still have to be written to the database.
///
/// Why memory first: a driver reports every few seconds and a job must find its nearby
/// drivers in well under a millisecond. Positions go into the spatial index at once and to
/// the database in batches (`DriverIndexSync`), from which the index is rebuilt at start
/// and other nodes learn of them. Only approved, online drivers with a position are indexed.
public final class DriverTracker: Sendable {
    struct Driver {
        var approved: Bool
        var online: Bool
        var sequence: Int64?
        /// The app session `sequence` counts in.
        var session: String?
        var receivedAt: Int64?
        var point: GeoPoint?
    }

    struct State {
        var drivers: [String: Driver] = [:]
        var dirty: [String: LocationWrite] = [:]
    }

    public let index: DriverIndex
    private let state = Mutex(State())

    public init(index: DriverIndex = DriverIndex()) {
        self.index = index
    }

    public enum LocationOutcome: Sendable, Equatable {
        case accepted
        /// A sequence at or below the last one: a duplicate or a late delivery.
        case stale(lastSequence: Int64)
        /// No driver profile is known for this user (on this node yet).
        case unknownDriver
        /// Sent too often for the driver's state (the trips module's limits); not recorded.
        case throttled(LocationThrottle)
    }

    /// Applies a position the driver sent now (`receivedAt`, server time).
    public func apply(_ driverID: String, _ update: LocationUpdate, receivedAt: Int64) -> LocationOutcome {
        let outcome: (LocationOutcome, Bool) = state.withLock { state in
            guard var driver = state.drivers[driverID] else { return (.unknownDriver, false) }
            // A restarted app counts from 1 again in a new session: its first sample is new.
            let newSession = update.session != nil && update.session != driver.session
            if !newSession, let sequence = update.sequence, let last = driver.sequence, sequence <= last { return (.stale(lastSequence: last), false) }
            if let last = driver.receivedAt, receivedAt < last, update.sequence == nil { return (.stale(lastSequence: driver.sequence ?? 0), false) }
            driver.sequence = newSession ? update.sequence : update.sequence ?? driver.sequence
            if newSession { driver.session = update.session }
            driver.receivedAt = receivedAt
            driver.point = update.point
            state.drivers[driverID] = driver
            state.dirty[driverID] = LocationWrite(
                driverID: driverID, latitude: update.point.latitude, longitude: update.point.longitude, accuracyM: update.accuracyMeters,
                heading: update.heading, speedMps: update.speedMps, sequence: update.sequence, receivedAt: receivedAt, clientAt: update.clientTime,
                session: update.session)
            // Inside the lock, so a concurrent `load` (went offline) cannot be undone by this upsert.
            if driver.approved && driver.online { index.upsert(driverID, at: update.point, time: receivedAt) }
            return (.accepted, true)
        }
        return outcome.0
    }

    /// Takes in what the database says about a driver (start-up, another node's change, a
    /// profile, approval or online change here). A position older than the one this node
    /// holds is ignored.
    public func load(_ record: DriverRecord) {
        state.withLock { state in
            var driver = state.drivers[record.userID] ?? Driver(approved: false, online: false)
            driver.approved = record.approval == .approved
            driver.online = record.isOnline
            if let at = record.locationAt, let lat = record.latitude, let lng = record.longitude,
                let point = GeoPoint.validated(latitude: lat, longitude: lng), driver.receivedAt.map({ at > $0 }) ?? true
            {
                driver.receivedAt = at
                driver.sequence = record.locationSeq ?? driver.sequence
                driver.session = record.locationSession ?? driver.session
                driver.point = point
            }
            state.drivers[record.userID] = driver
            if driver.approved && driver.online, let point = driver.point, let at = driver.receivedAt {
                index.upsert(record.userID, at: point, time: at)
            } else {
                index.remove(record.userID)
            }
        }
    }

    /// The positions received since the last call (newest per driver).
    public func takeDirty() -> [LocationWrite] {
        state.withLock { state in
            defer { state.dirty = [:] }
            return Array(state.dirty.values)
        }
    }

    /// Puts writes back after a failed flush, unless newer ones arrived meanwhile.
    public func restoreDirty(_ writes: [LocationWrite]) {
        state.withLock { state in
            for write in writes where state.dirty[write.driverID] == nil { state.dirty[write.driverID] = write }
        }
    }
}
