import Foundation

/// ISO 8601 in UTC to the second (`2026-11-21T08:30:00Z`), the date format of every API
/// payload and event.
///
/// Why no fraction: an iOS app decodes with `JSONDecoder.dateDecodingStrategy = .iso8601`
/// (an `ISO8601DateFormatter` with its default options), which refuses any fractional
/// seconds, so one `.123` in an answer failed the whole answer's decoding. Instants are
/// stored in milliseconds and printed rounded down: a client that sends a printed time
/// back as a cursor (`last_sync_at`) is at most a second early, which re-sends what it
/// already has rather than skipping anything. Order within a second comes from ids and
/// sequences, never from these strings. Parsing still accepts fractions (`parse`).
///
/// Why formatted from integer milliseconds: going through a floating-point `Date` can land
/// a stored `.000` on the second before. The integer path is exact and cheap enough for
/// hot paths (every envelope carries a timestamp).
public enum Timestamp {
    public static func string(_ date: Date) -> String {
        string(epochMilliseconds: date.epochMilliseconds)
    }

    public static func string(epochMilliseconds ms: Int64) -> String {
        let (days, msOfDay) = ms.quotientAndRemainder(dividingBy: 86_400_000)
        let (dayShift, dayMs) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
        let (year, month, day) = civil(fromDays: dayShift)
        let hour = dayMs / 3_600_000
        let minute = dayMs / 60_000 % 60
        let second = dayMs / 1000 % 60
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))Z"
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Parses ISO 8601 with or without fractional seconds; nil when it is not a timestamp,
    /// or names a day its month does not have (Foundation reads `2008-02-30` as 1 March).
    public static func parse(_ text: String) -> Date? {
        guard hasRealDate(text) else { return nil }
        if let date = try? fractional.parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// Whether the text starts with `YYYY-MM-DD` naming a day of the calendar.
    static func hasRealDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(10))
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte) - 48
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), day >= 1 else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return day <= days
    }
}
