import Foundation

/// A time of day on a wall clock, with no date and no time zone.
///
/// Why a separate type rather than `DateComponents`: preferences such as quiet hours are stated
/// in the user's local time ("22:00"), and only become instants once a day and a zone are
/// chosen. Keeping them zone-free avoids silently baking in today's UTC offset.
/// Minute precision is all a user can express in a settings screen.
public struct LocalTime: Sendable, Hashable, Comparable, Codable {
    public let hour: Int
    public let minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Accepts exactly "HH:MM" with ASCII digits.
    ///
    /// Why this strict: the same text is stored and echoed back to clients, so one spelling per
    /// time keeps comparisons and diffs honest; "7:00", "07:00:00" or padded text is refused
    /// rather than guessed at.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            let hour = Self.twoDigits(bytes[0], bytes[1]),
            let minute = Self.twoDigits(bytes[3], bytes[4])
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    /// The wall-clock time `instant` shows in `timeZone`.
    ///
    /// Why a calendar and not `secondsFromGMT`: the offset changes at DST transitions, and the
    /// calendar applies the offset in force at that very instant.
    public init(of instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = calendar.dateComponents([.hour, .minute], from: instant)
        hour = components.hour ?? 0
        minute = components.minute ?? 0
    }

    /// "HH:MM", the form `init?(parsing:)` accepts.
    public var text: String {
        (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }

    public var minutesSinceMidnight: Int { hour * 60 + minute }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool {
        lhs.minutesSinceMidnight < rhs.minutesSinceMidnight
    }

    /// Encoded as its "HH:MM" text so stored preferences and API payloads read naturally.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = LocalTime(parsing: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a time of day as HH:MM, got \"\(text)\"")
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    private static func twoDigits(_ tens: UInt8, _ units: UInt8) -> Int? {
        let zero = UInt8(ascii: "0")
        let nine = UInt8(ascii: "9")
        guard (zero...nine).contains(tens), (zero...nine).contains(units) else { return nil }
        return Int(tens - zero) * 10 + Int(units - zero)
    }
}
