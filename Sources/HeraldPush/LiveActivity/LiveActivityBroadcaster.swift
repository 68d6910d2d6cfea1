import HeraldCore

/// How APNs keeps a broadcast for a device that is offline when it is sent (the channel's
/// `message-storage-policy`, fixed when the channel is made).
public enum LiveActivityChannelStorage: String, ConfigChoice {
    /// Only devices connected at the time get it (Apple allows more pushes on such channels).
    case none
    /// APNs keeps the newest one for a device that comes back (until its `apns-expiration`).
    case mostRecent = "most_recent"

    /// Apple's number for it.
    public var apnsValue: Int { self == .none ? 0 : 1 }
}

/// What APNs answered a channel management request that did not succeed.
public struct LiveActivityChannelFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Apple's `reason` (or `HTTP<status>`, or the transport's failure).
    public var reason: String
    /// Worth another try later (a 429, a 5xx, no answer); else the request is wrong for good.
    public var retryable: Bool

    public init(reason: String, retryable: Bool) {
        self.reason = reason
        self.retryable = retryable
    }

    public var description: String { reason }
}

/// iOS 18 broadcast channels: one push reaches every device subscribed to a channel, which
/// Herald makes and deletes through APNs's channel management API. Only APNs has them (and
/// the log sender, which records them).
public protocol LiveActivityBroadcaster: Sendable {
    /// A new channel of the app; its id is what devices subscribe with.
    func createChannel(storage: LiveActivityChannelStorage) async -> Result<String, LiveActivityChannelFailure>
    /// Deletes a channel; one APNs no longer has counts as deleted.
    func deleteChannel(_ channelID: String) async -> Result<Void, LiveActivityChannelFailure>
    /// One update or end to every subscriber of the channel `message.token`. A channel APNs
    /// does not know is `tokenGone`.
    func broadcast(_ message: LiveActivityMessage, storage: LiveActivityChannelStorage) async throws -> PushResult
}
