import HeraldCore

/// How much a notification matters to its reader, independent of how it travels.
///
/// Why ordered: a user's severity floor keeps only notifications at or above it, and the
/// highest severity (`alert`) passes quiet hours.
public enum Severity: String, ConfigChoice, Comparable {
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
