import Foundation
import HeraldCore
import HeraldPush

/// A notification type's defaults, from the config file (or built in).
public struct NotificationTypeConfig: ConfigSection, Sendable, Equatable {
    /// `info`, `warning` or `alert`.
    public var severity: Severity
    /// `push` or `in_app`.
    public var delivery: DeliveryMode
    /// Whether users who never chose get it (an opt-in type says false).
    public var defaultEnabled: Bool
    /// The actionable-push category (`VOLUME_ADJUSTMENT`).
    public var category: String?
    /// `passive`, `active`, `time-sensitive` or `critical`.
    public var interruptionLevel: InterruptionLevel?
    /// Users cannot opt out, and quiet hours and the severity floor do not hold it back.
    public var critical: Bool
    /// Push even when the user's app holds a socket (the socket gets it too): for actionable
    /// pushes whose buttons belong on the lock screen (`volume_adjustment`).
    public var pushWhileOnline: Bool
    /// Repeats of the same (user, dedupe key) within this many seconds return the first
    /// notification instead of a new one; nil means the global default.
    public var dedupeCooldownSeconds: Int?

    public init(
        severity: Severity = .info, delivery: DeliveryMode = .push, defaultEnabled: Bool = true, category: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, critical: Bool = false, dedupeCooldownSeconds: Int? = nil, pushWhileOnline: Bool = false
    ) {
        self.pushWhileOnline = pushWhileOnline
        self.severity = severity
        self.delivery = delivery
        self.defaultEnabled = defaultEnabled
        self.category = category
        self.interruptionLevel = interruptionLevel
        self.critical = critical
        self.dedupeCooldownSeconds = dedupeCooldownSeconds
    }
}

extension NotificationTypeConfig {
    /// A type with every default (what a configured type leaves out keeps).
    public init() { self.init(severity: .info) }

    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}

/// The notifications module: types, routing and dedupe.
public struct NotificationsConfig: ConfigSection, Sendable, Equatable {
    /// Types besides (or overriding) the built-in ones, keyed by name.
    public var types: [String: NotificationTypeConfig] = [:]
    /// A `push` notification sent over a socket falls back to push when the client has not
    /// acknowledged it within this time (its app was backgrounded with the socket open).
    public var ackTimeoutMs = 5_000
    /// Default dedupe cooldown (the transit design's: 30 minutes).
    public var dedupeCooldownSeconds = 1_800
    /// Most recipients of one `POST /notifications`.
    public var maxRecipients = 1_000
    /// Sends written together in one transaction at most when they arrive at once (a group
    /// commit; 1: each send its own transaction).
    public var sendsPerTransaction = 64
    /// Unread notifications sent in one `sync`.
    public var syncLimit = 100
    /// The time zone (IANA name) of users who never sent theirs; nil: the agency time zone
    /// of the transit feed served, else UTC (`DefaultTimeZone`).
    public var defaultTimeZone: String?
    /// Types pushed only to some apps' devices, by type: `{job_new: [driver]}` (a type left
    /// out goes to every app; each app must be one of `push.apps` or `default`).
    public var typeApps: [String: [String]] = [:]
    public var liveActivities = LiveActivitiesConfig()

    public init() {}

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("notifications")
        checks.check((50...600_000).contains(ackTimeoutMs), "ack_timeout_ms", "must be between 50 and 600000")
        checks.check(dedupeCooldownSeconds >= 0, "dedupe_cooldown_seconds", "must not be negative")
        checks.check((1...100_000).contains(maxRecipients), "max_recipients", "must be between 1 and 100000")
        checks.check((1...1_000).contains(sendsPerTransaction), "sends_per_transaction", "must be between 1 and 1000")
        checks.check((1...1000).contains(syncLimit), "sync_limit", "must be between 1 and 1000")
        if let zone = defaultTimeZone {
            checks.check(TimeZone(identifier: zone) != nil, "default_time_zone", "must be an IANA time zone such as America/Halifax")
        }
        for (name, apps) in typeApps.sorted(by: { $0.key < $1.key }) {
            checks.check(!apps.isEmpty, "type_apps.\(name)", "must name at least one app")
        }
        for (name, type) in types.sorted(by: { $0.key < $1.key }) {
            let path = "types.\(name)"
            checks.check(NotificationTypeConfig.isValidName(name), path, "a type name is 1 to 64 characters of a-z, 0-9 and _")
            if let category = type.category {
                checks.check((1...64).contains(category.utf8.count), path + ".category", "must be 1 to 64 bytes")
            }
            if let cooldown = type.dedupeCooldownSeconds {
                checks.check(cooldown >= 0, path + ".dedupe_cooldown_seconds", "must not be negative")
            }
        }
        return checks.errors + liveActivities.validationErrors()
    }
}
