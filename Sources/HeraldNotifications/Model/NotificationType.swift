import HeraldCore
import HeraldPush

/// A kind of notification (`job_new`, `service_alert`) with the defaults every notification
/// of that kind starts from.
public struct NotificationType: Sendable, Equatable {
    public var name: String
    public var severity: Severity
    public var delivery: DeliveryMode
    /// Whether a user who never chose receives it (false: opt-in).
    public var defaultEnabled: Bool
    public var category: String?
    public var interruptionLevel: InterruptionLevel?
    /// Users cannot opt out; quiet hours and the severity floor do not hold it back.
    public var critical: Bool
    /// Push even to a user whose app is connected (an actionable push belongs on the lock
    /// screen); the socket gets it too.
    public var pushWhileOnline: Bool
    public var dedupeCooldownSeconds: Int
    /// The apps whose devices it is pushed to (a driver's offer to the driver app only);
    /// nil: every app's.
    public var apps: Set<String>?

    public init(
        name: String, severity: Severity, delivery: DeliveryMode, defaultEnabled: Bool = true, category: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, critical: Bool = false, dedupeCooldownSeconds: Int = 1800, pushWhileOnline: Bool = false
    ) {
        self.pushWhileOnline = pushWhileOnline
        self.name = name
        self.severity = severity
        self.delivery = delivery
        self.defaultEnabled = defaultEnabled
        self.category = category
        self.interruptionLevel = interruptionLevel
        self.critical = critical
        self.dedupeCooldownSeconds = dedupeCooldownSeconds
    }
}

/// The notification types in force: the built-in ones of Herald's flows, overridden or
/// extended by the config file's `notifications.types`.
///
/// Why types are configuration, not API input: a type's defaults (severity, opt-out rules,
/// category) are a product decision reviewed with the app; backends only name the type.
public struct NotificationTypeCatalog: Sendable {
    public let types: [String: NotificationType]

    public static func builtIn(cooldown: Int) -> [String: NotificationType] {
        let list = [
            NotificationType(
                name: "job_new", severity: .alert, delivery: .push, category: "JOB_OFFER", interruptionLevel: .timeSensitive,
                dedupeCooldownSeconds: cooldown),
            NotificationType(
                name: "job_update", severity: .warning, delivery: .push, category: "JOB_UPDATE", interruptionLevel: .active,
                dedupeCooldownSeconds: cooldown),
            NotificationType(
                name: "driver_assigned", severity: .alert, delivery: .push, category: "DRIVER_ASSIGNED",
                interruptionLevel: .timeSensitive, dedupeCooldownSeconds: cooldown),
            NotificationType(
                name: "volume_adjustment", severity: .alert, delivery: .push, category: "VOLUME_ADJUSTMENT",
                interruptionLevel: .timeSensitive, critical: true, dedupeCooldownSeconds: cooldown, pushWhileOnline: true),
            NotificationType(
                name: "trip_update", severity: .warning, delivery: .push, category: "TRIP_UPDATE", interruptionLevel: .active,
                dedupeCooldownSeconds: cooldown),
            NotificationType(
                name: "ride_new", severity: .alert, delivery: .push, category: "RIDE_OFFER", interruptionLevel: .timeSensitive,
                dedupeCooldownSeconds: cooldown),
            // "Your driver has arrived" is high priority (the rideshare design): on the lock screen even while the app is open.
            NotificationType(
                name: "trip_arrived", severity: .alert, delivery: .push, category: "TRIP_UPDATE", interruptionLevel: .timeSensitive,
                dedupeCooldownSeconds: cooldown, pushWhileOnline: true),
            // The silent state-sync push: never shown, so it is not the user's to turn off.
            NotificationType(
                name: "trip_sync", severity: .alert, delivery: .push, category: nil, interruptionLevel: .passive, critical: true,
                dedupeCooldownSeconds: cooldown),
            NotificationType(
                name: "service_alert", severity: .warning, delivery: .push, category: "SERVICE_ALERT", interruptionLevel: .active,
                dedupeCooldownSeconds: cooldown),
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
    }

    public init(config: NotificationsConfig) {
        var types = Self.builtIn(cooldown: config.dedupeCooldownSeconds)
        for (name, entry) in config.types {
            types[name] = NotificationType(
                name: name, severity: entry.severity,
                delivery: entry.delivery, defaultEnabled: entry.defaultEnabled,
                category: entry.category, interruptionLevel: entry.interruptionLevel, critical: entry.critical,
                dedupeCooldownSeconds: entry.dedupeCooldownSeconds ?? config.dedupeCooldownSeconds, pushWhileOnline: entry.pushWhileOnline)
        }
        for (name, apps) in config.typeApps { types[name]?.apps = Set(apps) }
        self.types = types
    }

    public subscript(name: String) -> NotificationType? { types[name] }

    /// Whether any type is pushed only to some apps (`notifications.type_apps`).
    public var limitsApps: Bool { types.values.contains { $0.apps != nil } }

    /// The devices of `devices` a push of `type` goes to: those of its apps.
    public static func devices(_ devices: [DeviceRecord], for type: NotificationType?) -> [DeviceRecord] {
        guard let apps = type?.apps else { return devices }
        return devices.filter { apps.contains($0.appID) }
    }

    public var names: [String] { types.keys.sorted() }
}
