/// The ranges a GTFS-Realtime number must fall in to mean anything. The decoder reads a
/// number outside its range as absent: a nonsense value is never trusted, and never traps.
///
/// Why at the decoder: a realtime message is stored before it is applied and decoded again
/// at every start, and its numbers flow into day arithmetic, milliseconds and JSON. One
/// message with a timestamp in nanoseconds, a delay of `Int32.min` or a `direction_id` of
/// 200 (each a plausible producer mistake) must not stop a node, let alone every restart
/// after it. Bounding every number where it enters keeps everything downstream total.
public enum RealtimeBounds {
    /// 9999-12-31T23:59:59Z: the last instant a date can be written for, and far enough
    /// below `Int64.max / 1000` that any instant converts to milliseconds.
    public static let latestInstant: Int64 = 253_402_300_799
    /// A week: a delay or earliness beyond it is no prediction any rider can use.
    public static let maximumDelaySeconds: Int32 = 7 * 86_400

    /// An epoch-seconds field (`header.timestamp`, `active_period`, `timestamp`).
    public static func instant(_ value: UInt64) -> Int64? {
        value <= UInt64(latestInstant) ? Int64(value) : nil
    }

    /// An `active_period` bound: one past the last instant means "never" for a start and
    /// "until further notice" for an end, so it is held at the last instant, not dropped
    /// (a dropped start would put the alert in force now).
    public static func periodBound(_ value: UInt64) -> Int64 {
        Int64(min(value, UInt64(latestInstant)))
    }

    /// A signed epoch-seconds field (a stop time event's `time` and `scheduled_time`).
    public static func instant(_ value: Int64) -> Int64? {
        (0...latestInstant).contains(value) ? value : nil
    }

    /// A delay in seconds (either sign).
    public static func delay(_ value: Int32) -> Int32? {
        (-maximumDelaySeconds...maximumDelaySeconds).contains(value) ? value : nil
    }

    /// `direction_id`: 0 or 1, as in GTFS.
    public static func direction(_ value: UInt32) -> Int? {
        value <= 1 ? Int(value) : nil
    }

    /// `route_type`: GTFS's basic types and the extended ones (100–1700).
    public static func routeType(_ value: Int32) -> Int? {
        (0...1_799).contains(value) ? Int(value) : nil
    }

    /// `occupancy_percentage`: 0 and up (crowded vehicles report above 100).
    public static func percentage(_ value: UInt32) -> Int? {
        value <= 1_000 ? Int(value) : nil
    }
}
