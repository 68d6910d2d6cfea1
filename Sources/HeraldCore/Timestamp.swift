import Foundation

/// ISO 8601 in UTC with milliseconds (`2026-11-21T08:30:00.000Z`), the date format of
/// every API payload.
///
/// Why formatted from integer milliseconds: instants are stored as epoch milliseconds, and
/// going through a floating-point `Date` can print `.122` for a stored `.123`. The integer
/// path is exact and cheap enough for hot paths (every envelope carries a timestamp).
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
        let millisecond = dayMs % 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
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
