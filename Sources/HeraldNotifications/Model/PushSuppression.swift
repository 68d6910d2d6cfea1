/// Why a notification was not pushed (stored as `notifications.push_suppressed`, answered as
/// `push_suppressed`); the inbox keeps it either way.
public enum PushSuppression: String, Sendable, Codable, CaseIterable {
    /// The type's delivery is `in_app`.
    case inAppOnly = "in_app_only"
    /// The user switched the type's pushes off.
    case typeDisabled = "type_disabled"
    /// Below the user's severity floor.
    case severityFloor = "severity_floor"
    /// Inside the user's quiet hours (transit alerts may send a digest when they end).
    case quietHours = "quiet_hours"
}
