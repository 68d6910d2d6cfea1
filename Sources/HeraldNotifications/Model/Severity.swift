/// How much a notification matters to its reader, independent of how it travels.
///
/// Why ordered: a user's severity floor keeps only notifications at or above it, and the
/// highest severity (`alert`) passes quiet hours.
public enum Severity: String, Sendable, Codable, CaseIterable, Comparable {
    case info
    case warning
    case alert

    var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .alert: 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// `push`: reach the user even when offline (socket first when connected — the notification
/// design's "opportunistic fallforward"). `in_app`: never interrupt; socket when online, inbox otherwise.
public enum DeliveryMode: String, Sendable, Codable, CaseIterable {
    case push
    case inApp = "in_app"
}
