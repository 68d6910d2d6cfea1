/// A push service's refusal (RFC 8030 §5 and the major services' statuses) or a
/// subscription Herald cannot encrypt for.
public enum WebPushFailure: Sendable, Hashable, CustomStringConvertible {
    /// 404: the subscription expired.
    case notFound
    /// 410: the subscription was revoked.
    case gone
    /// 413, or a payload too large to encrypt into one record.
    case payloadTooLarge
    /// 429.
    case tooManyRequests
    /// 408.
    case requestTimeout
    /// 5xx.
    case serverError(Int)
    /// 400/401/403 or another status no table lists, with the service's own words, bounded.
    case refused(status: Int, detail: String?)
    /// The device has no `p256dh`/`auth` keys.
    case missingSubscriptionKeys
    /// The keys are not base64url.
    case invalidSubscriptionKeys
    /// A key or endpoint that cannot be used (the encryption's or VAPID's error).
    case invalidSubscription(String)

    public var description: String {
        switch self {
        case .notFound: "NotFound"
        case .gone: "Gone"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyRequests: "TooManyRequests"
        case .requestTimeout: "RequestTimeout"
        case .serverError(let status): "ServerError(\(status))"
        case .refused(let status, let detail):
            "\(Self.name(of: status))(\(status))" + (detail.map { ": \($0)" } ?? "")
        case .missingSubscriptionKeys: "MissingSubscriptionKeys"
        case .invalidSubscriptionKeys: "InvalidSubscriptionKeys: p256dh and auth must be base64url"
        case .invalidSubscription(let error): "InvalidSubscription: \(error)"
        }
    }

    private static func name(of status: Int) -> String {
        switch status {
        case 400: "BadRequest"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        default: "UnexpectedStatus"
        }
    }
}
