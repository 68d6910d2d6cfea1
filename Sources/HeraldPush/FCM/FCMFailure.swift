/// FCM's documented `errorCode`s (`google.firebase.fcm.v1.FcmError`), the two Herald
/// derives, and what the table does not list.
public enum FCMFailure: Sendable, Hashable, CustomStringConvertible {
    case unspecifiedError, invalidArgument, unregistered, senderIDMismatch, quotaExceeded, unavailable, `internal`
    case thirdPartyAuthError
    /// The access token was refused (HTTP 401 or the canonical `UNAUTHENTICATED`).
    case unauthenticated
    /// `INVALID_ARGUMENT` about the registration token: Google's words for a token that is
    /// not a valid FCM registration token, which no retry changes.
    case invalidRegistrationToken
    /// The OAuth token endpoint refused the service account: Herald's configuration, not
    /// this push (see `FCMSender.send`).
    case authConfiguration
    /// A canonical `google.rpc` status or code the table does not list, as sent.
    case other(String)
    /// An answer without an error body: `HTTP_<status>`.
    case http(Int)

    private static let byName: [String: FCMFailure] = Dictionary(
        uniqueKeysWithValues: [
            FCMFailure.unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .quotaExceeded, .unavailable, .internal,
            .thirdPartyAuthError, .unauthenticated,
        ].map { ($0.description, $0) })

    /// FCM's `errorCode` or canonical status by name.
    public init(code: String) {
        self = Self.byName[code] ?? .other(code)
    }

    /// FCM's spelling, stored with the delivery.
    public var description: String {
        switch self {
        case .unspecifiedError: "UNSPECIFIED_ERROR"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .unregistered: "UNREGISTERED"
        case .senderIDMismatch: "SENDER_ID_MISMATCH"
        case .quotaExceeded: "QUOTA_EXCEEDED"
        case .unavailable: "UNAVAILABLE"
        case .internal: "INTERNAL"
        case .thirdPartyAuthError: "THIRD_PARTY_AUTH_ERROR"
        case .unauthenticated: "UNAUTHENTICATED"
        case .invalidRegistrationToken: "INVALID_REGISTRATION_TOKEN"
        case .authConfiguration: "AUTH_CONFIGURATION"
        case .other(let code): code
        case .http(let status): "HTTP_\(status)"
        }
    }
}
