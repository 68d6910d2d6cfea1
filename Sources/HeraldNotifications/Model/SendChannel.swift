/// Where a sent notification went first (`channel` in the send's answer).
public enum SendChannel: String, Sendable, Codable, CaseIterable {
    /// In the app now, waiting for its ack when it may fall back to push.
    case socket
    /// Queued for the user's devices.
    case push
    /// Kept for the next sync: no socket, no push.
    case inbox
    /// A notification with the same dedupe key was sent within the cooldown: that one.
    case deduplicated
}

/// The channel that delivered a notification (`notifications.sent_via`).
public enum SentVia: String, Sendable, Codable, CaseIterable {
    case socket
    case push
}
