/// Calendar dates as day numbers (days since 1970-01-01), the unit GTFS calendars,
/// service days and time-zone arithmetic share.
///
/// Why not Foundation's `Calendar`: a departures answer touches dates dozens of times, and
/// these conversions are a few integer operations (Howard Hinnant's civil-date algorithms),
/// free of any locale or time zone.
public enum ServiceDate {
    /// Days since 1970-01-01 of a proleptic Gregorian date; nil unless it is a real date.
    public static func days(year: Int, month: Int, day: Int) -> Int32? {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Int32(era * 146_097 + dayOfEra - 719_468)
    }

    /// The date of a day number. (HeraldCore's `Timestamp` has the same algorithm for its
    /// instants; this module stays free of the server's dependencies, so it has its own.)
    public static func civil(_ days: Int32) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// 0 = Monday … 6 = Sunday (GTFS calendar.txt's column order).
    public static func weekday(_ days: Int32) -> Int {
        // 1970-01-01 was a Thursday (3).
        let value = (Int(days) + 3) % 7
        return value < 0 ? value + 7 : value
    }

    /// `YYYYMMDD`.
    public static func compact(_ days: Int32) -> String {
        let (y, m, d) = civil(days)
        return pad(y, 4) + pad(m, 2) + pad(d, 2)
    }

    /// `YYYY-MM-DD`.
    public static func iso(_ days: Int32) -> String {
        let (y, m, d) = civil(days)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    /// Parses `YYYYMMDD` or `YYYY-MM-DD`.
    public static func parse(_ text: String) -> Int32? {
        let digits = text.filter { $0 != "-" }
        guard digits.count == 8, text.count == 8 || (text.count == 10 && Array(text)[4] == "-" && Array(text)[7] == "-"),
            let number = Int(digits)
        else { return nil }
        return days(year: number / 10_000, month: number / 100 % 100, day: number % 100)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
