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
    /// 426 to a plain HTTP request on a WebSocket endpoint.
    public static let upgradeRequired: ErrorCode = "UPGRADE_REQUIRED"

    // Socket events' codes (both protocols; `docs/realtime.md` lists them). Kept here with
    // the HTTP codes so one name never means two things to a client.

    /// An event's argument is missing or malformed.
    public static let invalidArgument: ErrorCode = "INVALID_ARGUMENT"
    /// A native message that is not a JSON object with a `type`.
    public static let invalidMessage: ErrorCode = "INVALID_MESSAGE"
    /// A native message whose `type` the server does not know.
    public static let unknownType: ErrorCode = "UNKNOWN_TYPE"
    /// An `ack` naming no delivery that waits for one.
    public static let unknownAck: ErrorCode = "UNKNOWN_ACK"
    /// A channel name that is not one (`stop:200060`, `trip:tr_4e5f`).
    public static let invalidChannel: ErrorCode = "INVALID_CHANNEL"
    /// An `unsubscribe` from a channel the connection does not follow.
    public static let notSubscribed: ErrorCode = "NOT_SUBSCRIBED"
    /// A connection (or user) already follows as many channels as it may.
    public static let tooManyChannels: ErrorCode = "TOO_MANY_CHANNELS"
    /// A resume's `last_event_id` that is not an event id.
    public static let invalidEventID: ErrorCode = "INVALID_EVENT_ID"
    /// Too many socket messages (or location reports) in a short time; `retry_after_ms` says when.
    public static let rateLimited: ErrorCode = "RATE_LIMITED"
    /// The connection's token expired: reconnect with a fresh one.
    public static let tokenExpired: ErrorCode = "TOKEN_EXPIRED"
    /// The node is shutting down: reconnect (to another node).
    public static let serverClosing: ErrorCode = "SERVER_CLOSING"
    /// A socket event failed inside the server; the detail is in the server's log only.
    public static let internalError: ErrorCode = "INTERNAL_ERROR"
}
