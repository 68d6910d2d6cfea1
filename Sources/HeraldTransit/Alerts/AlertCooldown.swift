/// Whether a new version of an alert sounds on a rider's phone, or only replaces what the
/// phone shows (the transit design's third deduplication layer, its 30-minute suppression
/// key per user and alert).
///
/// Why versions are still sent inside the window, quietly: an edited alert (a later
/// estimate, a corrected stop) must replace the text on the lock screen and in the inbox,
/// or the rider acts on the first version; what the cooldown removes is the second buzz.
/// Why an escalation sounds anyway: a delay that becomes a cancellation changes what the
/// rider should do now, which is what the first push was for.
public struct AlertCooldown: Sendable, Equatable {
    /// A push of the alert the rider heard: when (ms) and at what severity.
    public struct Sounded: Sendable, Equatable {
        public var at: Int64
        public var severity: AlertSeverity

        public init(at: Int64, severity: AlertSeverity) {
            self.at = at
            self.severity = severity
        }
    }

    /// 0 turns the cooldown off (every version sounds).
    public var seconds: Int

    public init(seconds: Int) {
        self.seconds = seconds
    }

    /// True when a version at `severity` sounds, given the user's earlier sounding pushes of
    /// the same alert: none within the window, or every one of them less severe.
    public func sounds(_ severity: AlertSeverity, after earlier: [Sounded], now: Int64) -> Bool {
        let window = Int64(seconds) * 1000
        let recent = earlier.filter { now - $0.at < window }
        guard let loudest = recent.map({ Self.rank($0.severity) }).max() else { return true }
        return Self.rank(severity) > loudest
    }

    static func rank(_ severity: AlertSeverity) -> Int {
        switch severity {
        case .info: 0
        case .warning: 1
        case .critical: 2
        }
    }
}
