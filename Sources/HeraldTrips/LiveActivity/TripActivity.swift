import HeraldCore
import HeraldNotifications
import HeraldPush

/// A ride's Live Activity: what its attributes and content state hold, and which trip
/// changes reach it how (the policy `docs/live-activities.md` states).
///
/// Content state (`TripActivityAttributes.ContentState` in HeraldClient):
/// `{trip_id, state, driver_name, vehicle, license_plate, eta_minutes, eta_kind}`.
/// Every transition is important (priority 10): the rider must see the driver arrive, the
/// ride start and end. Only the arrival and a cancellation carry an alert. ETA changes are
/// routine (priority 5, coalesced).
public enum TripActivity {
    /// The static attributes: the trip and where it goes.
    public static func attributes(_ trip: TripRecord) -> [String: JSONValue] {
        [
            "trip_id": .string(trip.id), "pickup_address": trip.pickupAddress.map(JSONValue.string) ?? .null,
            "dropoff_address": trip.dropoffAddress.map(JSONValue.string) ?? .null,
        ]
    }

    /// The whole content state (at the match, and for an activity registered later).
    public static func content(_ trip: TripRecord, driverName: String?, vehicle: VehicleRecord?) -> [String: JSONValue] {
        [
            "trip_id": .string(trip.id), "state": .string(trip.state.rawValue),
            "driver_name": .string(TripJSON.firstName(driverName) ?? "Your driver"),
            "vehicle": vehicle.map { .string("\($0.color) \($0.make) \($0.model)") } ?? .null,
            "license_plate": vehicle.map { .string($0.licensePlate) } ?? .null, "eta_minutes": .null, "eta_kind": .null,
        ]
    }

    /// The start push at the match, to the rider's push-to-start tokens.
    public static func start(_ trip: TripRecord, driverName: String?, vehicle: VehicleRecord?, alertBody: String) -> LiveActivityStart {
        LiveActivityStart(
            kind: .trip, subjectID: trip.id, userIDs: [trip.riderID], attributes: attributes(trip),
            content: content(trip, driverName: driverName, vehicle: vehicle), alert: LiveActivityAlert(title: "Driver on the way", body: alertBody))
    }

    /// A transition: the new state, the ETA cleared until the next sample says it (the
    /// estimate of a state that ended means nothing), the end at COMPLETED or CANCELLED.
    public static func change(_ trip: TripRecord, driverName: String?) -> LiveActivityChange {
        let name = TripJSON.firstName(driverName) ?? "Your driver"
        let alert: LiveActivityAlert? =
            switch trip.state {
            case .arrived: LiveActivityAlert(title: "Your driver has arrived", body: "\(name) is waiting at the pickup.")
            case .cancelled: LiveActivityAlert(title: "Trip cancelled", body: "This trip was cancelled.")
            default: nil
            }
        return LiveActivityChange(
            kind: .trip, subjectID: trip.id, patch: ["state": .string(trip.state.rawValue), "eta_minutes": .null, "eta_kind": .null],
            important: true, alert: alert, ends: trip.state.isFinal)
    }

    /// A new ETA from the driver's position, in whole minutes (rounded up; at least 1).
    public static func eta(tripID: String, minutes: Int, kind: String) -> LiveActivityChange {
        LiveActivityChange(kind: .trip, subjectID: tripID, patch: ["eta_minutes": .number(Double(minutes)), "eta_kind": .string(kind)])
    }

    /// The minutes an ETA shows.
    public static func minutes(seconds: Int) -> Int { max(1, (seconds + 59) / 60) }
}
