import Foundation

/// What an APNs answer means for the delivery (Apple's status and reason table).
public enum APNsVerdict: Sendable, Equatable {
    case result(PushResult)
    /// 403 `ExpiredProviderToken`: renew the provider token and send again.
    case renewTokenAndRetry
    /// 413 `PayloadTooLarge`: send again with a shorter body (once).
    case shortenAndRetry
}

public enum APNsResponse {
    /// Reasons that mean the token will never work again.
    static let goneReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered", "ExpiredToken"]
    /// Reasons worth another try later.
    static let transientReasons: Set<String> = [
        "TooManyRequests", "TooManyProviderTokenUpdates", "IdleTimeout", "InternalServerError", "ServiceUnavailable", "Shutdown",
    ]

    /// Classifies an answer. `goneSince` is the 410 body's `timestamp` (epoch ms) and
    /// `deviceUpdatedAt` when the device last registered: a token that was re-registered after
    /// APNs saw it go is a newer registration and is kept.
    public static func classify(
        status: Int, reason: String?, goneSince: Int64?, deviceUpdatedAt: Int64?, apnsID: String?, retryAfter: Duration?
    ) -> APNsVerdict {
        if (200..<300).contains(status) { return .result(.delivered(providerMessageID: apnsID)) }
        let reason = reason ?? "HTTP\(status)"
        if status == 403 && reason == "ExpiredProviderToken" { return .renewTokenAndRetry }
        if status == 413 { return .shortenAndRetry }
        if goneReasons.contains(reason) || status == 410 {
            if status == 410, let goneSince, let deviceUpdatedAt, deviceUpdatedAt > goneSince {
                return .result(.failed(reason: "\(reason) (token re-registered since)"))
            }
            return .result(.tokenGone(reason: reason))
        }
        if status == 429 || status >= 500 || transientReasons.contains(reason) {
            return .result(.retry(reason: reason, after: retryAfter))
        }
        return .result(.failed(reason: reason))
    }
}
