import HeraldCore

extension ErrorCode {
    public static let jobNotFound: ErrorCode = "JOB_NOT_FOUND"
    public static let jobAlreadyAccepted: ErrorCode = "JOB_ALREADY_ACCEPTED"
    public static let jobNotAvailable: ErrorCode = "JOB_NOT_AVAILABLE"
    public static let invalidTransition: ErrorCode = "INVALID_TRANSITION"
    public static let driverNotFound: ErrorCode = "DRIVER_NOT_FOUND"
    public static let driverNotApproved: ErrorCode = "DRIVER_NOT_APPROVED"
    public static let locationRequired: ErrorCode = "LOCATION_REQUIRED"
}

/// The dispatch module's client errors, each with its stable code.
enum DispatchError {
    static let jobNotFound = APIError(status: 404, code: .jobNotFound, message: "No such job.")
    static let alreadyAccepted = APIError(status: 409, code: .jobAlreadyAccepted, message: "Job already accepted by another driver")
    static func notAvailable(_ status: JobStatus) -> APIError {
        APIError(status: 409, code: .jobNotAvailable, message: "The job is \(status.rawValue) and can no longer be accepted.", details: ["status": .string(status.rawValue)])
    }
    static let driverNotFound = APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
    static let unknownDriver = APIError(status: 404, code: .driverNotFound, message: "No such driver.")
    static func notApproved(_ approval: DriverApproval) -> APIError {
        APIError(status: 403, code: .driverNotApproved, message: "Your driver account is \(approval.rawValue); only approved drivers take jobs.", details: ["approval_status": .string(approval.rawValue)])
    }
    static let locationRequired = APIError(status: 409, code: .locationRequired, message: "Send your location first (POST /api/v1/drivers/location).")
    static func invalidTransition(from: JobStatus, to: String, allowed: [JobStatus]) -> APIError {
        APIError(
            status: 409, code: .invalidTransition, message: "A \(from.rawValue) job cannot become \(to).",
            details: ["status": .string(from.rawValue), "allowed_transitions": .array(allowed.map { .string($0.rawValue) })])
    }
}
