import HeraldCore

extension ErrorCode {
    public static let tripNotFound: ErrorCode = "TRIP_NOT_FOUND"
    public static let tripAlreadyCancelled: ErrorCode = "TRIP_ALREADY_CANCELLED"
    public static let driverUnavailable: ErrorCode = "DRIVER_UNAVAILABLE"
    public static let surgeChanged: ErrorCode = "SURGE_CHANGED"
    public static let rideRequestNotFound: ErrorCode = "RIDE_REQUEST_NOT_FOUND"
    public static let rideAlreadyAccepted: ErrorCode = "RIDE_ALREADY_ACCEPTED"
    public static let rideRequestClosed: ErrorCode = "RIDE_REQUEST_CLOSED"
    public static let driverBusy: ErrorCode = "DRIVER_BUSY"
    public static let vehicleNotEligible: ErrorCode = "VEHICLE_NOT_ELIGIBLE"
    public static let idempotencyKeyRequired: ErrorCode = "IDEMPOTENCY_KEY_REQUIRED"
    public static let tripNotCompleted: ErrorCode = "TRIP_NOT_COMPLETED"
    public static let tripAlreadyRated: ErrorCode = "TRIP_ALREADY_RATED"
}

/// The trips module's client errors (the rideshare design's error table plus the request's own).
public enum TripError {
    public static let tripNotFound = APIError(status: 404, code: .tripNotFound, message: "No such trip.")
    public static let requestNotFound = APIError(status: 404, code: .rideRequestNotFound, message: "No such ride request.")
    public static let alreadyCancelled = APIError(status: 409, code: .tripAlreadyCancelled, message: "The trip was already cancelled; refresh its state.")
    public static let alreadyAccepted = APIError(status: 409, code: .rideAlreadyAccepted, message: "Another driver accepted this ride first.")
    public static let driverBusy = APIError(status: 409, code: .driverBusy, message: "Finish or cancel your current trip first.")
    public static let idempotencyKeyRequired = APIError(
        status: 400, code: .idempotencyKeyRequired, message: "Send an Idempotency-Key header, so a retried request cannot book two rides.")
    public static let notCompleted = APIError(status: 409, code: .tripNotCompleted, message: "A trip can be rated once it is completed.")
    public static let alreadyRated = APIError(status: 409, code: .tripAlreadyRated, message: "You already rated this trip.")
    public static let notAParty = APIError(status: 403, code: .forbidden, message: "Only the trip's rider and driver rate it.")
    public static let locationRequired = APIError(
        status: 409, code: .locationRequired, message: "Your location is unknown or stale; share your location to confirm the pickup.")

    public static func requestClosed(_ state: RideRequestState) -> APIError {
        if state == .expired {
            return APIError(
                status: 409, code: .driverUnavailable, message: "No driver accepted this ride in time.", details: ["state": .string(state.rawValue)])
        }
        return APIError(
            status: 409, code: .rideRequestClosed, message: "The ride request is \(state.rawValue.lowercased()).", details: ["state": .string(state.rawValue)])
    }

    public static func vehicleNotEligible(_ reason: String) -> APIError {
        APIError(status: 409, code: .vehicleNotEligible, message: reason)
    }

    public static func surgeChanged(_ estimate: JSONValue, multiplier: Double) -> APIError {
        APIError(
            status: 409, code: .surgeChanged, message: "The price changed while you were requesting; confirm the new surge multiplier.",
            details: ["surge_multiplier": .number(multiplier), "fare_estimate": estimate])
    }

    public static func invalidTransition(from: TripState, to: String) -> APIError {
        APIError(
            status: 409, code: .invalidTransition, message: "A \(from.rawValue) trip cannot become \(to).",
            details: ["state": .string(from.rawValue), "allowed_transitions": .array(from.allowedTransitions.map { .string($0.rawValue) })])
    }

    public static func notYours(_ actor: TripActor, to: TripState) -> APIError {
        APIError(
            status: 403, code: .forbidden, message: "A \(actor.rawValue.lowercased()) cannot move a trip to \(to.rawValue).",
            details: ["to": .string(to.rawValue)])
    }
}
