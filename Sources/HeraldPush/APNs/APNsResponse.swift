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
    /// Classifies an answer. `goneSince` is the 410 body's `timestamp` (epoch ms) and
    /// `deviceUpdatedAt` when the device last registered: a token that was re-registered after
    /// APNs saw it go is a newer registration and is kept.
    public static func classify(
        status: Int, reason: String?, goneSince: Int64?, deviceUpdatedAt: Int64?, apnsID: String?, retryAfter: Duration?
    ) -> APNsVerdict {
        if (200..<300).contains(status) { return .result(.accepted(providerMessageID: apnsID)) }
        let failure = APNsFailure(status: status, reason: reason)
        if status == 403 && failure == .expiredProviderToken { return .renewTokenAndRetry }
        if status == 413 { return .shortenAndRetry }
        if failure.meansTokenGone || status == 410 {
            if status == 410, let goneSince, let deviceUpdatedAt, deviceUpdatedAt > goneSince {
                return .result(.refused(.apns(.goneBeforeReRegistration(failure))))
            }
            return .result(.tokenGone(.apns(failure)))
        }
        if status == 429 || status >= 500 || failure.isTransient {
            return .result(.retryLater(.apns(failure), after: retryAfter))
        }
        return .result(.refused(.apns(failure)))
    }
}
