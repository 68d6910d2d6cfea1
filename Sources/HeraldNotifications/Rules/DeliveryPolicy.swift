import Foundation
import HeraldPush

/// What a user has said about notifications, as the policy needs it.
public struct UserNotificationSettings: Sendable, Equatable {
    public var timeZone: TimeZone
    /// Nil when quiet hours are off.
    public var quietHours: QuietHours?
    public var severityFloor: Severity
    public var timeSensitiveAllowed: Bool
    /// Per type: (in-app, push); a type missing here has its defaults.
    public var types: [String: (inApp: Bool, push: Bool)]
    /// Quiet hours of a type, replacing `quietHours` for notifications of that type (the
    /// notification design keeps them per type: a user may mute promotions at night but not trip updates).
    public var typeQuietHours: [String: QuietHours] = [:]

    public init(
        timeZone: TimeZone, quietHours: QuietHours? = nil, severityFloor: Severity = .info, timeSensitiveAllowed: Bool = true,
        types: [String: (inApp: Bool, push: Bool)] = [:]
    ) {
        self.timeZone = timeZone
        self.quietHours = quietHours
        self.severityFloor = severityFloor
        self.timeSensitiveAllowed = timeSensitiveAllowed
        self.types = types
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.timeZone == rhs.timeZone && lhs.quietHours == rhs.quietHours && lhs.severityFloor == rhs.severityFloor
            && lhs.timeSensitiveAllowed == rhs.timeSensitiveAllowed
            && lhs.types.mapValues { [$0.inApp, $0.push] } == rhs.types.mapValues { [$0.inApp, $0.push] }
            && lhs.typeQuietHours == rhs.typeQuietHours
    }
}

/// Which channels a notification may use for one user, and why push was held back.
public struct DeliveryDecision: Sendable, Equatable {
    /// May appear live in the app (socket). The inbox always keeps it.
    public var inApp: Bool
    /// May interrupt with a push (only meaningful for `push` delivery).
    public var push: Bool
    /// Why push is off.
    public var pushSuppressed: PushSuppression?
    public var interruptionLevel: InterruptionLevel?

    public init(inApp: Bool, push: Bool, pushSuppressed: PushSuppression?, interruptionLevel: InterruptionLevel?) {
        self.inApp = inApp
        self.push = push
        self.pushSuppressed = pushSuppressed
        self.interruptionLevel = interruptionLevel
    }
}

/// The preference rules (the transit app's alert settings, the notification design's
/// preferences), as one pure function.
///
/// Why the floor and quiet hours only hold back pushes: they exist to stop interruptions.
/// The inbox is the source of truth and still gets every notification; a user who opens the
/// app sees it. Critical types ignore opt-out, quiet hours and the floor; the highest
/// severity (`alert`) passes quiet hours.
public enum DeliveryPolicy {
    public static func decide(
        type: NotificationType, severity: Severity, delivery: DeliveryMode, settings: UserNotificationSettings, at instant: Date,
        interruptionLevel requested: InterruptionLevel? = nil
    ) -> DeliveryDecision {
        let choice = settings.types[type.name]
        let inApp = type.critical || (choice?.inApp ?? type.defaultEnabled)
        var suppressed: PushSuppression?
        if delivery == .inApp {
            suppressed = .inAppOnly
        } else if !type.critical && !(choice?.push ?? type.defaultEnabled) {
            suppressed = .typeDisabled
        } else if !type.critical && severity < settings.severityFloor {
            suppressed = .severityFloor
        } else if !type.critical && severity != .alert, let quiet = settings.typeQuietHours[type.name] ?? settings.quietHours,
            quiet.contains(instant, timeZone: settings.timeZone)
        {
            suppressed = .quietHours
        }
        var level = requested ?? type.interruptionLevel ?? (severity == .alert ? .timeSensitive : .active)
        if level == .critical && !type.critical { level = .timeSensitive }
        if level == .timeSensitive && !settings.timeSensitiveAllowed { level = .active }
        return DeliveryDecision(inApp: inApp, push: suppressed == nil, pushSuppressed: suppressed, interruptionLevel: level)
    }
}
