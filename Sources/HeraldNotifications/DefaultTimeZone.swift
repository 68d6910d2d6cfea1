import Foundation
import Synchronization

/// The time zone of a user who never told Herald theirs: quiet hours and digests run in it.
///
/// Why not UTC: a rider in Halifax who set quiet hours 22:00–07:00 and never sent a time
/// zone was woken at 18:00 local time. The deployment's `notifications.default_time_zone`
/// decides when set; otherwise the zone of the transit feed being served (its
/// `agency_timezone`, which is where the riders are), supplied by the transit module;
/// UTC only when there is neither.
public final class DefaultTimeZone: Sendable {
    private let configured: String?
    private let fallback = Mutex<(@Sendable () -> String?)?>(nil)

    public init(configured identifier: String?) {
        configured = identifier.flatMap { TimeZone(identifier: $0) == nil ? nil : $0 }
    }

    /// Where the zone comes from when none is configured (the served feed's agency zone).
    public func useFallback(_ provider: @escaping @Sendable () -> String?) {
        fallback.withLock { $0 = provider }
    }

    public var zone: TimeZone { TimeZone(identifier: identifier) ?? .gmt }

    /// The default zone's IANA name, as configured or as the feed names it. (Names are kept
    /// as given: Foundation on Linux calls `UTC` `GMT`, which apps would show back.)
    public var identifier: String {
        if let configured { return configured }
        if let identifier = fallback.withLock({ $0 })?(), TimeZone(identifier: identifier) != nil { return identifier }
        return "UTC"
    }

    /// The zone a user's settings run in: theirs when they chose one, else this default.
    public func zone(chosen identifier: String?) -> TimeZone {
        identifier.flatMap(TimeZone.init(identifier:)) ?? zone
    }

    /// The name of that zone.
    public func identifier(chosen: String?) -> String {
        if let chosen, TimeZone(identifier: chosen) != nil { return chosen }
        return identifier
    }
}
