import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldRealtime
import Logging

/// The location stream of a trip: every report the dispatch index accepts is judged here
/// (rate limit by state first, then the fraud rules), kept in the trip's audit trail, and —
/// when accurate and unsuspicious — shown to the rider as `driver_location`, with
/// `eta_update` when an ETA moved by more than the threshold.
///
/// Why its own owner: it is dispatch's `LocationObserver` for the trips module, on the hot
/// path of every driver's report; the judgement is `TripTracker`'s, the writes are
/// `TripLocationWriter`'s batches, and a fraud warning is flagged on the trip through `TripBook`.
public final class TripLocationStream: LocationObserver {
    let tracker: TripTracker
    let writer: TripLocationWriter
    let book: TripBook
    let effects: TripEffects
    let statistics: TripStatistics
    let logger: Logger

    init(tracker: TripTracker, writer: TripLocationWriter, book: TripBook, effects: TripEffects, statistics: TripStatistics, logger: Logger) {
        self.tracker = tracker
        self.writer = writer
        self.book = book
        self.effects = effects
        self.statistics = statistics
        self.logger = logger
    }

    public func admit(driverID: String, receivedAt: Int64) async -> LocationThrottle? {
        await tracker.admit(driverID: driverID, at: receivedAt)
    }

    public func accepted(driverID: String, update: LocationUpdate, receivedAt: Int64) async {
        guard let judgement = tracker.judge(driverID: driverID, update: update, at: receivedAt) else { return }
        let room = RoomName.trip(judgement.trip.id)
        var events: [TrackedEvent] = []
        if let location = judgement.location { events.append(TrackedEvent(room: room, name: "driver_location", payload: location)) }
        if let eta = judgement.eta { events.append(TrackedEvent(room: room, name: "eta_update", payload: eta)) }
        writer.enqueue(events: events, row: judgement.row)
        if !judgement.warnings.isEmpty { await warn(driverID, judgement) }
        if let seconds = judgement.pushETASeconds { await pushETA(judgement.trip, seconds: seconds) }
        if let activities = effects.liveActivities, let eta = judgement.activityETA {
            await activities.publish(TripActivity.eta(tripID: judgement.trip.id, minutes: eta.minutes, kind: eta.kind))
        }
    }

    /// `location_warning` to the driver, and a flag on the trip for operators.
    func warn(_ driverID: String, _ judgement: TripTracker.Judgement) async {
        for warning in judgement.warnings {
            await effects.publish(
                "location_warning",
                [
                    "warning_code": .string(warning.code), "action": .string(warning.action), "message": .string(warning.message),
                    "trip_id": .string(judgement.trip.id),
                ], to: RoomName.user(driverID))
        }
        do {
            try await book.flag(judgement.trip.id, codes: judgement.warnings.map(\.code))
            for warning in judgement.warnings { statistics.flagged(warning.code) }
        } catch {
            logger.error("flagging a trip failed", metadata: ["trip_id": "\(judgement.trip.id)", "error": "\(String(reflecting: error))"])
        }
        logger.warning(
            "suspicious driver location", metadata: ["trip_id": "\(judgement.trip.id)", "warnings": "\(judgement.warnings.map(\.code).joined(separator: ","))"])
    }

    /// The rider's push when the ETA moved by more than `eta_push_threshold_seconds`.
    func pushETA(_ trip: TripTracker.TripSnapshot, seconds: Int) async {
        let minutes = max(1, Int((Double(seconds) / 60).rounded()))
        let body = trip.state == .inProgress ? "You will arrive in about \(minutes) min." : "Your driver is now about \(minutes) min away."
        let draft = NotificationDraft(
            userIDs: [trip.riderID], type: "trip_update", title: "Updated arrival time", body: body,
            data: ["trip_id": .string(trip.id), "event_type": "eta_changed", "eta_seconds": .number(Double(seconds))], collapseKey: "trip-eta-\(trip.id)")
        do {
            _ = try await effects.notifications.send(draft)
        } catch {
            logger.error("pushing an ETA change failed", metadata: ["trip_id": "\(trip.id)", "error": "\(String(reflecting: error))"])
        }
    }
}
