import HeraldCore
import HeraldPush

/// Live Activities (`notifications.live_activities`): how often Herald may update one, and
/// the names of the app's `ActivityAttributes` types.
public struct LiveActivitiesConfig: ConfigSection, Sendable, Equatable {
    /// Off: no activity is started, updated or ended (registrations are still accepted).
    public var enabled = true
    /// A routine update (an ETA that moved) waits until this long after the activity's last
    /// push; later ones meanwhile replace it (one push carries the newest content).
    /// Important changes (a state a person must see) go at once.
    public var routineIntervalSeconds = 30
    /// The content shows as outdated this long after it was sent (`stale-date`), when no
    /// newer push arrived (the driver's phone went offline).
    public var staleSeconds = 900
    /// An ended activity stays on the lock screen this long (`dismissal-date`; Apple keeps
    /// one at most four hours).
    public var dismissalSeconds = 900
    /// Activities one user may have registered and not ended at once.
    public var maxPerUser = 32
    /// The app's `ActivityAttributes` type name per kind (`trip`, `job`, `departures`), sent
    /// as `attributes-type` when Herald starts one: it must match the Swift type's name.
    public var attributesTypes: [String: String] = [:]
    /// What APNs keeps of a broadcast for a device that is offline: `most_recent` (the newest
    /// one, until it goes stale) or `none` (Apple allows more pushes on such channels).
    public var channelStorage = LiveActivityChannelStorage.mostRecent
    /// A broadcast channel no app asked for in this long is deleted at APNs (an activity
    /// lives at most eight hours and stays on the lock screen four more; an app asks for
    /// the channel each time it starts one).
    public var channelIdleSeconds = 43_200
    /// Broadcast channels Herald keeps per app and environment (Apple allows 10,000).
    public var maxChannels = 10_000

    public init() {}

    /// The built-in type names, which `HeraldClient`'s types carry.
    public static let defaultAttributesTypes = [
        "trip": "TripActivityAttributes", "job": "JobActivityAttributes", "departures": "DeparturesActivityAttributes",
    ]

    /// The `attributes-type` for `kind`.
    public func attributesType(_ kind: String) -> String {
        attributesTypes[kind] ?? Self.defaultAttributesTypes[kind] ?? kind
    }

    func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("notifications.live_activities")
        checks.check((0...3_600).contains(routineIntervalSeconds), "routine_interval_seconds", "must be between 0 and 3600")
        checks.check((60...86_400).contains(staleSeconds), "stale_seconds", "must be between 60 and 86400")
        checks.check((0...14_400).contains(dismissalSeconds), "dismissal_seconds", "must be between 0 and 14400 (Apple's four hours)")
        checks.check((1...1_000).contains(maxPerUser), "max_per_user", "must be between 1 and 1000")
        checks.check((3_600...2_592_000).contains(channelIdleSeconds), "channel_idle_seconds", "must be between 3600 and 2592000")
        checks.check((1...10_000).contains(maxChannels), "max_channels", "must be between 1 and 10000 (Apple's limit)")
        for (kind, name) in attributesTypes.sorted(by: { $0.key < $1.key }) {
            checks.check(Self.defaultAttributesTypes[kind] != nil, "attributes_types.\(kind)", "is not a kind: trip, job or departures")
            checks.check(
                (1...128).contains(name.utf8.count) && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" },
                "attributes_types.\(kind)", "must be a Swift type name")
        }
        return checks.errors
    }
}
