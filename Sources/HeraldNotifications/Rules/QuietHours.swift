import Foundation

/// A daily window of local wall-clock time during which a user does not want to be interrupted.
///
/// The window is the half-open interval [start, end): a window ending at 07:00 lets a
/// notification through at 07:00 exactly, so back-to-back windows never overlap.
/// When `start > end` the window spans midnight (22:00–07:00 covers 22:00…23:59 and
/// 00:00…06:59).
/// When `start == end` the window is empty. Why empty rather than all day: a user who drags both
/// handles to the same time has most likely not finished choosing; muting every push around the
/// clock is what the per-channel "off" switch is for, and is too costly to do by accident.
///
/// Evaluation always goes through the user's `TimeZone` rather than a stored UTC offset, so the
/// window follows the user's clock across daylight-saving changes.
public struct QuietHours: Sendable, Hashable, Codable {
    public var start: LocalTime
    public var end: LocalTime

    public init(start: LocalTime, end: LocalTime) {
        self.start = start
        self.end = end
    }

    public var isEmpty: Bool { start == end }

    public func contains(_ time: LocalTime) -> Bool {
        if start < end { return start <= time && time < end }
        if start > end { return time >= start || time < end }
        return false
    }

    /// Whether the user's clock in `timeZone` reads a time inside the window at `instant`.
    public func contains(_ instant: Date, timeZone: TimeZone) -> Bool {
        contains(LocalTime(of: instant, in: timeZone))
    }

    /// When `instant` is inside the window, the instant it ends: the next time the user's clock
    /// reads `end`. `nil` when `instant` is outside the window.
    ///
    /// Why `.nextTime`: on the night clocks spring forward, `end` may fall in the skipped hour
    /// (02:30 in Sydney on the first Sunday of October). The window then ends at the first
    /// instant after the gap, not a day later, which is what a digest scheduled for "after quiet
    /// hours" should do.
    public func nextEnd(after instant: Date, timeZone: TimeZone) -> Date? {
        guard contains(instant, timeZone: timeZone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.nextDate(
            after: instant,
            matching: DateComponents(hour: end.hour, minute: end.minute, second: 0),
            matchingPolicy: .nextTime)
    }
}
