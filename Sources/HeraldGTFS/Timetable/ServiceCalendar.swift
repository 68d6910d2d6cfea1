/// Which services run on which date: calendar.txt's weekdays within its date range, plus
/// the dates calendar_dates.txt adds, minus the ones it removes.
///
/// Why a bit per (date, service) computed once: a departures answer asks "does this trip's
/// service run on this date?" for every candidate row; a bit test answers it in a
/// nanosecond. A feed spanning a year with 1,000 services costs 46 KB.
public struct ServiceCalendar: Sendable, Equatable {
    /// The first and last date any service runs (nil: none ever does).
    public let days: ClosedRange<Int32>?
    let wordsPerDay: Int
    let bits: [UInt64]

    public init(feed: TransitFeed) {
        let services = feed.serviceIDs.count
        wordsPerDay = max(1, (services + 63) / 64)
        guard let days = feed.serviceDayRange else {
            self.days = nil
            bits = []
            return
        }
        self.days = days
        let dayCount = Int(days.upperBound - days.lowerBound) + 1
        var bits = [UInt64](repeating: 0, count: dayCount * wordsPerDay)
        let words = wordsPerDay
        for rule in feed.calendars where rule.startDay <= rule.endDay {
            for day in max(rule.startDay, days.lowerBound)...min(rule.endDay, days.upperBound)
            where rule.weekdays & (1 << ServiceDate.weekday(day)) != 0 {
                bits[Int(day - days.lowerBound) * words + Int(rule.service) / 64] |= 1 << (UInt64(rule.service) % 64)
            }
        }
        // Removals and additions after the rules, so an exception always wins.
        for exception in feed.calendarExceptions where days.contains(exception.day) {
            let index = Int(exception.day - days.lowerBound) * words + Int(exception.service) / 64
            let mask: UInt64 = 1 << (UInt64(exception.service) % 64)
            if exception.added { bits[index] |= mask } else { bits[index] &= ~mask }
        }
        self.bits = bits
    }

    public func isActive(service: Int32, day: Int32) -> Bool {
        guard let days, days.contains(day) else { return false }
        return bits[Int(day - days.lowerBound) * wordsPerDay + Int(service) / 64] & (1 << (UInt64(service) % 64)) != 0
    }

    /// The bits of `day` (bit `s % 64` of word `s / 64`: service `s` runs), zeros outside
    /// the calendar: what a search that asks about one day many times copies once.
    public func words(day: Int32) -> [UInt64] {
        guard let days, days.contains(day) else { return [UInt64](repeating: 0, count: wordsPerDay) }
        let start = Int(day - days.lowerBound) * wordsPerDay
        return Array(bits[start..<(start + wordsPerDay)])
    }

    /// Whether any service runs on `day`.
    public func hasService(day: Int32) -> Bool {
        guard let days, days.contains(day) else { return false }
        let start = Int(day - days.lowerBound) * wordsPerDay
        return bits[start..<(start + wordsPerDay)].contains { $0 != 0 }
    }

    /// The services running on `day`, in index order.
    public func activeServices(day: Int32) -> [Int32] {
        guard let days, days.contains(day) else { return [] }
        let start = Int(day - days.lowerBound) * wordsPerDay
        var result: [Int32] = []
        for word in 0..<wordsPerDay {
            var value = bits[start + word]
            while value != 0 {
                let bit = value.trailingZeroBitCount
                result.append(Int32(word * 64 + bit))
                value &= value - 1
            }
        }
        return result
    }

    public var byteCount: Int { bits.capacity * 8 }
}
