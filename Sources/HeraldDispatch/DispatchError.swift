import HeraldCore

extension ErrorCode {
    public static let jobNotFound: ErrorCode = "JOB_NOT_FOUND"
    public static let jobAlreadyAccepted: ErrorCode = "JOB_ALREADY_ACCEPTED"
    public static let jobNotAvailable: ErrorCode = "JOB_NOT_AVAILABLE"
    public static let invalidTransition: ErrorCode = "INVALID_TRANSITION"
    public static let driverNotFound: ErrorCode = "DRIVER_NOT_FOUND"
    public static let driverNotApproved: ErrorCode = "DRIVER_NOT_APPROVED"
    public static let locationRequired: ErrorCode = "LOCATION_REQUIRED"
    public static let jobNotArrived: ErrorCode = "JOB_NOT_ARRIVED"
    public static let adjustmentAlreadyMade: ErrorCode = "ADJUSTMENT_ALREADY_MADE"
    public static let adjustmentAlreadyDecided: ErrorCode = "ADJUSTMENT_ALREADY_DECIDED"
    public static let noPendingAdjustment: ErrorCode = "NO_PENDING_ADJUSTMENT"
    public static let adjustmentPending: ErrorCode = "ADJUSTMENT_PENDING"
    public static let adjustmentNotExpired: ErrorCode = "ADJUSTMENT_NOT_EXPIRED"
    public static let extensionLimitReached: ErrorCode = "EXTENSION_LIMIT_REACHED"
    public static let paymentDeclined: ErrorCode = "PAYMENT_DECLINED"
    public static let paymentHoldClosed: ErrorCode = "PAYMENT_HOLD_CLOSED"
    public static let paymentInvalid: ErrorCode = "PAYMENT_INVALID"
    public static let paymentUnavailable: ErrorCode = "PAYMENT_UNAVAILABLE"
}

/// The dispatch module's client errors, each with its stable code.
enum DispatchError {
    static let jobNotFound = APIError(status: 404, code: .jobNotFound, message: "No such job.")
    static let alreadyAccepted = APIError(status: 409, code: .jobAlreadyAccepted, message: "Job already accepted by another driver")
    static func notAvailable(_ status: JobStatus) -> APIError {
        APIError(
            status: 409, code: .jobNotAvailable, message: "The job is \(status.rawValue) and can no longer be accepted.",
            details: ["status": .string(status.rawValue)])
    }
    static let driverNotFound = APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
    static let unknownDriver = APIError(status: 404, code: .driverNotFound, message: "No such driver.")
    static func notApproved(_ approval: DriverApproval) -> APIError {
        APIError(
            status: 403, code: .driverNotApproved, message: "Your driver account is \(approval.rawValue); only approved drivers take jobs.",
            details: ["approval_status": .string(approval.rawValue)])
    }
    static let locationRequired = APIError(status: 409, code: .locationRequired, message: "Send your location first (POST /api/v1/drivers/location).")
    static func invalidTransition(from: JobStatus, to: String, allowed: [JobStatus]) -> APIError {
        APIError(
            status: 409, code: .invalidTransition, message: "A \(from.rawValue) job cannot become \(to).",
            details: ["status": .string(from.rawValue), "allowed_transitions": .array(allowed.map { .string($0.rawValue) })])
    }

    static func notArrived(_ status: JobStatus) -> APIError {
        APIError(
            status: 409, code: .jobNotArrived, message: "The volume can be adjusted only once the driver has arrived (the job is \(status.rawValue)).",
            details: ["status": .string(status.rawValue)])
    }
    static func alreadyMade(_ adjustment: AdjustmentRecord) -> APIError {
        APIError(
            status: 409, code: .adjustmentAlreadyMade, message: "This job's volume was already adjusted; one adjustment per job.",
            details: ["adjustment": DispatchJSON.adjustment(adjustment, now: nil)])
    }
    static func alreadyDecided(_ adjustment: AdjustmentRecord) -> APIError {
        APIError(
            status: 409, code: .adjustmentAlreadyDecided, message: "The price adjustment was already \(adjustment.status.rawValue).",
            details: ["adjustment": DispatchJSON.adjustment(adjustment, now: nil)])
    }
    static let noPendingAdjustment = APIError(status: 409, code: .noPendingAdjustment, message: "This job has no price adjustment waiting for an answer.")
    static let adjustmentPending = APIError(
        status: 409, code: .adjustmentPending, message: "The customer has not answered the price adjustment yet; wait, extend or cancel with the trip fee.")
    static func notExpired(_ adjustment: AdjustmentRecord) -> APIError {
        APIError(
            status: 409, code: .adjustmentNotExpired, message: "The customer still has time to answer; cancel with the trip fee after the deadline.",
            details: ["deadline_at": DispatchJSON.time(adjustment.deadlineAt)])
    }
    static func extensionLimit(_ max: Int) -> APIError {
        APIError(
            status: 409, code: .extensionLimitReached, message: "The proposal was already extended \(max) times.",
            details: ["max_extensions": .number(Double(max))])
    }
}
