import HeraldCore
import HeraldNotifications

/// A push a trip change sends (the rideshare design's table), named by what it says and to whom.
///
/// Why named cases rather than drafts in the machine: `TripLifecycle` says which notices a
/// change sends, and is tested on that; the wording, types and collapse keys live here once.
public enum TripNotice: Sendable, Equatable {
    /// To the rider: the driver is at the pickup.
    case driverArrived
    /// To the rider, silent: the ride started (the app syncs; nothing is shown).
    case rideStarted
    /// To the rider: the ride is over; rate it.
    case rideCompleted
    /// To the rider: the driver cancelled (before the ride started a new search is under way).
    case driverCancelled(findingAnother: Bool)
    /// To the driver: the rider cancelled.
    case riderCancelled
    /// To the rider: an operator (or the system) cancelled.
    case cancelledForRider
    /// To the driver: an operator (or the system) cancelled.
    case cancelledForDriver

    /// The notification for trip `tripID` (of `riderID` and `driverID`) becoming `newState`.
    func draft(tripID: String, riderID: String, driverID: String, newState: TripState) -> NotificationDraft {
        let data: [String: JSONValue] = ["trip_id": .string(tripID), "event_type": "state_changed", "new_state": .string(newState.rawValue)]
        let collapse = "trip-\(tripID)"
        func visible(_ user: String, _ type: String, _ title: String, _ body: String) -> NotificationDraft {
            NotificationDraft(userIDs: [user], type: type, title: title, body: body, data: data, collapseKey: collapse)
        }
        switch self {
        case .driverArrived:
            return visible(riderID, "trip_arrived", "Driver arrived", "Your driver has arrived")
        case .rideStarted:
            return NotificationDraft(userIDs: [riderID], type: "trip_sync", title: "Trip started", data: data, collapseKey: collapse, silent: true)
        case .rideCompleted:
            return visible(riderID, "trip_update", "Trip complete", "Trip complete. Rate your ride?")
        case .driverCancelled(let finding):
            return visible(
                riderID, "trip_update", "Driver cancelled", finding ? "Your driver cancelled. Finding another..." : "Your driver cancelled the trip.")
        case .riderCancelled:
            return visible(driverID, "trip_update", "Trip cancelled", "The rider cancelled the trip.")
        case .cancelledForRider:
            return visible(riderID, "trip_update", "Trip cancelled", "Your trip was cancelled.")
        case .cancelledForDriver:
            return visible(driverID, "trip_update", "Trip cancelled", "The trip was cancelled.")
        }
    }
}
