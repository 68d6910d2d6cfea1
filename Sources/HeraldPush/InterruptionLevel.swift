import HeraldCore

/// How a notification may interrupt: Apple's `interruption-level`, which the FCM and Web Push
/// senders map to priority and urgency. Stored in `notifications.interruption_level` and
/// configured per type as its raw text.
public enum InterruptionLevel: String, ConfigChoice {
    /// Added quietly: no sound, no wake (Android low priority, Web Push urgency `low`).
    case passive
    case active
    /// Breaks through Focus where the user allows it (urgent on Android and Web Push).
    case timeSensitive = "time-sensitive"
    /// Needs Apple's entitlement; only types configured `critical` may use it.
    case critical

    /// Whether providers should wake the device for it.
    public var isUrgent: Bool { self == .timeSensitive || self == .critical }
}
