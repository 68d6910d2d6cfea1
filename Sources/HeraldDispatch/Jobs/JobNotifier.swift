import Foundation
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging

/// How dispatch tells people about jobs: notifications written in a change's unit of work,
/// Live Activities changed in it, socket events after its commit.
///
/// Why nothing here fails its caller: the change is committed (or about to be); a socket event
/// or a push that cannot be made is logged, never a reason to undo the job's change (as the
/// dispatch design asks: the job stays assigned).
final class JobNotifier: Sendable {
    let hub: RealtimeHub
    let notifications: NotificationService
    let liveActivities: LiveActivityService?
    let drivers: DriverDirectory
    let database: any Database
    let config: DispatchConfig
    let logger: Logger

    init(
        hub: RealtimeHub, notifications: NotificationService, liveActivities: LiveActivityService?, drivers: DriverDirectory, database: any Database,
        config: DispatchConfig, logger: Logger
    ) {
        self.hub = hub
        self.notifications = notifications
        self.liveActivities = liveActivities
        self.drivers = drivers
        self.database = database
        self.config = config
        self.logger = logger
    }

    // MARK: Inside a unit of work

    /// Prepares a notification; nil (logged) when it cannot be, so the domain change still happens.
    func prepare(_ draft: NotificationDraft) async -> NotificationService.PreparedSend? {
        do {
            return try await notifications.prepare(draft)
        } catch {
            logger.error("preparing a notification failed", metadata: ["type": "\(draft.type)", "error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// Prepares each draft that can be (see `prepare`).
    func prepare(_ drafts: [NotificationDraft]) async -> [NotificationService.PreparedSend] {
        var ready: [NotificationService.PreparedSend] = []
        for draft in drafts { if let send = await prepare(draft) { ready.append(send) } }
        return ready
    }

    /// Writes a prepared notification (if any) in `work`, delivered after its commit.
    func write(_ prepared: NotificationService.PreparedSend?, in work: UnitOfWork) async throws {
        if let prepared { try await notifications.write(prepared, in: work) }
    }

    /// Applies a job's change to its activities inside `work`; wakes the sender after the commit.
    func publishActivity(_ change: LiveActivityChange, in work: UnitOfWork) async throws {
        guard let activities = liveActivities, try await activities.publish(change, in: work.db) > 0 else { return }
        work.afterCommit { activities.wake() }
    }

    /// Starts the customer's activity (push-to-start) inside `work`.
    func startActivity(_ start: LiveActivityStart, in work: UnitOfWork) async throws {
        guard let activities = liveActivities, try await activities.start(start, in: work.db) > 0 else { return }
        work.afterCommit { activities.wake() }
    }

    // MARK: After commits

    /// Publishes without failing the caller: the change is committed, the event is a courtesy.
    func publish(_ event: String, _ payload: JSONValue, to room: String) async {
        do {
            try await hub.publish(event, payload: payload, to: room)
        } catch {
            logger.error("publishing a dispatch event failed", metadata: ["event": "\(event)", "room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Publishes many events in one commit, without failing the caller.
    func publish(batch events: [(name: String, payload: JSONValue, room: String)]) async {
        do {
            try await hub.publish(batch: events)
        } catch {
            logger.error("publishing dispatch events failed", metadata: ["events": "\(events.count)", "error": "\(String(reflecting: error))"])
        }
    }

    func addToRoom(_ users: [String], _ room: String) async {
        do {
            try await hub.addUsers(users, to: room)
        } catch {
            logger.error("joining users to a room failed", metadata: ["room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    /// `job:status` to the job's room and, when the job leaves the market (it was pending and is
    /// now accepted, cancelled or expired), to every driver who was offered it or whose feed
    /// could show it (a job left in a feed costs a tap and a 409).
    func announce(_ job: JobRecord, previous: JobStatus?, driver: DriverRecord?, offeredDrivers: [String]) async {
        let payload = Self.statusPayload(job, previous: previous, driver: driver)
        var drivers = Set(offeredDrivers)
        if previous == .pending { drivers.formUnion(await feedAudience(job)) }
        if let winner = job.driverID { drivers.remove(winner) }
        await publish(
            batch: [("job:status", payload, RoomName.job(job.id))] + drivers.sorted().map { ("job:status", payload, DispatchService.driverRoom($0)) })
    }

    /// The approved drivers whose feed (`JobBook.availableJobs`) shows `job` now: within the
    /// feed radius of their last position (the live index, else the stored one), or every
    /// approved driver with a position for a job without one.
    func feedAudience(_ job: JobRecord) async -> Set<String> {
        let radius = config.feedRadiusMeters
        let center = job.point
        do {
            let band = center.map { (min: $0.latitude - radius / 111_000, max: $0.latitude + radius / 111_000) }
            let stored = try await database.withConnection { db in try await self.drivers.approvedPositions(db, latitudeBand: band) }
            var audience = Set<String>()
            for candidate in stored {
                guard let position = drivers.tracker.index.position(of: candidate.userID)?.point ?? candidate.point else { continue }
                if let center, Haversine.distanceMeters(center, position) > radius { continue }
                audience.insert(candidate.userID)
            }
            if let center {
                for match in drivers.tracker.index.nearest(to: center, radiusMeters: radius, limit: Int.max, freshSince: 0) {
                    audience.insert(match.driverID)
                }
            }
            return audience
        } catch {
            logger.error("finding the drivers whose feeds show a job failed", metadata: ["job_id": "\(job.id)", "error": "\(String(reflecting: error))"])
            return []
        }
    }

    /// `job:status` as the dispatch design sends it (the drivers' feeds drop the job on `accepted`).
    static func statusPayload(_ job: JobRecord, previous: JobStatus?, driver: DriverRecord?) -> JSONValue {
        [
            "job_id": .string(job.id), "status": .string(job.status.rawValue), "previous_status": previous.map { .string($0.rawValue) } ?? .null,
            "driver_id": job.driverID.map(JSONValue.string) ?? .null, "driver_name": driver.map { .string($0.name) } ?? .null,
            "updated_at": DispatchJSON.time(job.updatedAt),
        ]
    }
}
