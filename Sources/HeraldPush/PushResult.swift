/// How a provider answered one push, classified for the worker.
///
/// Why typed: the worker decides from the case alone (mark sent, retry later, deactivate the
/// device, dead-letter), and the reason says which of the provider's documented answers it
/// was, so a caller can match on `.apns(.unregistered)` instead of comparing strings. The
/// reason's `description` is the text stored with the delivery.
public enum PushResult: Sendable, Equatable {
    /// The provider took the push; its message id when it gives one.
    case accepted(providerMessageID: String?)
    /// Try again later (throttled, provider unavailable, no answer); `after` honours `Retry-After`.
    case retryLater(PushFailure, after: Duration?)
    /// The token will never work again: deactivate the device.
    case tokenGone(PushFailure)
    /// This message will never be taken (bad payload, bad topic, bad credentials): dead-letter it.
    case refused(PushFailure)
}

/// Why a push was not accepted: a provider's own answer, or the transport's failure.
public enum PushFailure: Sendable, Hashable, CustomStringConvertible {
    case apns(APNsFailure)
    case fcm(FCMFailure)
    case webPush(WebPushFailure)
    case transport(PushTransportFailure)

    public var description: String {
        switch self {
        case .apns(let failure): failure.description
        case .fcm(let failure): failure.description
        case .webPush(let failure): failure.description
        case .transport(let failure): failure.rawValue
        }
    }
}

/// A push that got no answer from its provider.
public enum PushTransportFailure: String, Sendable, Hashable {
    /// No answer within the request timeout.
    case timeout
    /// The connection failed or closed before the answer.
    case connectionError = "connection_error"
    /// The sender threw (a token refresh that failed, a sender of a future provider).
    case sendError = "send_error"
}
