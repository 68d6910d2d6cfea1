/// A stable, upper-case error code that clients switch on.
///
/// Why a struct and not an enum: domain modules add their own codes
/// (`JOB_ALREADY_ACCEPTED`, `TRIP_NOT_FOUND`, …) without touching the kernel, while the
/// codes every route shares live here.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let validationFailed: ErrorCode = "VALIDATION_FAILED"
    public static let invalidJSON: ErrorCode = "INVALID_JSON"
    public static let unauthorized: ErrorCode = "UNAUTHORIZED"
    public static let forbidden: ErrorCode = "FORBIDDEN"
    public static let notFound: ErrorCode = "NOT_FOUND"
    public static let methodNotAllowed: ErrorCode = "METHOD_NOT_ALLOWED"
    public static let conflict: ErrorCode = "CONFLICT"
    public static let payloadTooLarge: ErrorCode = "PAYLOAD_TOO_LARGE"
    public static let unsupportedMediaType: ErrorCode = "UNSUPPORTED_MEDIA_TYPE"
    public static let rateLimitExceeded: ErrorCode = "RATE_LIMIT_EXCEEDED"
    public static let appUpdateRequired: ErrorCode = "APP_UPDATE_REQUIRED"
    public static let originNotAllowed: ErrorCode = "ORIGIN_NOT_ALLOWED"
    public static let idempotencyKeyReused: ErrorCode = "IDEMPOTENCY_KEY_REUSED"
    public static let idempotencyRequestInProgress: ErrorCode = "IDEMPOTENCY_REQUEST_IN_PROGRESS"
    public static let serviceUnavailable: ErrorCode = "SERVICE_UNAVAILABLE"
    /// 503 to a new connection from a client already holding `server.max_connections_per_client`.
    public static let tooManyConnections: ErrorCode = "TOO_MANY_CONNECTIONS"
    public static let internalServerError: ErrorCode = "INTERNAL_SERVER_ERROR"
}
