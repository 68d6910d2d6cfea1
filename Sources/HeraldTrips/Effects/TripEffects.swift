import HeraldCore
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging

/// The effects the trips owners run around their transactions: socket publishes, room joins,
/// tracker announcements, and preparing and writing notifications.
///
/// Why one helper: ride requests, rounds, accepts, transitions and the location stream all
/// tell clients the same way and log a failure the same way. An effect follows a commit and
/// cannot undo it, so publish failures are logged here and never thrown.
final class TripEffects: Sendable {
    let hub: RealtimeHub
    let notifications: NotificationService
    /// Starts, updates and ends riders' Live Activities (nil: none are kept).
    let liveActivities: LiveActivityService?
    let tracker: TripTracker
    let clock: any HeraldClock
    let logger: Logger

    init(
        hub: RealtimeHub, notifications: NotificationService, liveActivities: LiveActivityService?, tracker: TripTracker, clock: any HeraldClock,
        logger: Logger
    ) {
        self.hub = hub
        self.notifications = notifications
        self.liveActivities = liveActivities
        self.tracker = tracker
        self.clock = clock
        self.logger = logger
    }

    var now: Int64 { clock.now().epochMilliseconds }

    /// The room of a driver's devices, where ride offers and their closing go.
    static func driverRoom(_ id: String) -> String { "driver:\(id)" }

    func publish(_ event: String, _ payload: JSONValue, to room: String, persist: Bool = true) async {
        do {
            try await hub.publish(event, payload: payload, to: room, persist: persist)
        } catch {
            logger.error("publishing a trip event failed", metadata: ["event": "\(event)", "room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    func publish(batch events: [(name: String, payload: JSONValue, room: String)]) async {
        do {
            try await hub.publish(batch: events)
        } catch {
            logger.error("publishing trip events failed", metadata: ["events": "\(events.count)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Tells every node's tracker (and this one at once) about a trip's new state.
    func announce(_ trip: TripRecord) async {
        let snapshot = TripTracker.TripSnapshot(trip)
        tracker.apply(snapshot, at: now)
        await publish("trip", snapshot.json, to: TripTracker.announcementRoom, persist: false)
    }

    func addToRoom(_ users: [String], _ room: String) async {
        do {
            try await hub.addUsers(users, to: room)
        } catch {
            logger.error("joining users to a trip room failed", metadata: ["room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    func prepare(_ draft: NotificationDraft) async -> NotificationService.PreparedSend? {
        do {
            return try await notifications.prepare(draft)
        } catch {
            logger.error("preparing a trip notification failed", metadata: ["type": "\(draft.type)", "error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// Writes prepared notifications in `work`, delivered after its commit.
    func write(_ prepared: [NotificationService.PreparedSend], in work: UnitOfWork) async throws {
        try await notifications.write(prepared, in: work)
    }
}
