import Foundation

/// An agency's time zone as a table of UTC offsets, for the arithmetic GTFS needs: when a
/// service day starts, which local day an instant falls on, and ISO 8601 times with the
/// offset in force (`2025-11-12T08:35:00+11:00`).
///
/// Why a table: Foundation answers each of these with a calendar computation; departures
/// need them for every row. The table is read from the zone's rules once (`TimeZone`'s
/// daylight-saving transitions over the years a feed covers) and then looked up by binary
/// search. Outside the table's years the nearest offset is used.
public struct AgencyTimeZone: Sendable, Equatable {
    public let identifier: String
    /// Instants (epoch seconds) at which the offset changes, ascending.
    let transitions: [Int64]
    /// `offsets[i]` is in force before `transitions[i]`; the last entry after the last one.
    let offsets: [Int32]

    /// Builds the table for `identifier` over the given years; nil for an unknown zone.
    public init?(identifier: String, fromYear: Int, toYear: Int) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        let startDay = ServiceDate.days(year: max(1, fromYear), month: 1, day: 1) ?? 0
        let endDay = ServiceDate.days(year: min(9999, toYear), month: 12, day: 31) ?? 0
        var date = Date(timeIntervalSince1970: TimeInterval(Int64(startDay) * 86_400))
        let end = Date(timeIntervalSince1970: TimeInterval(Int64(endDay + 1) * 86_400))
        var transitions: [Int64] = []
        var offsets: [Int32] = [Int32(zone.secondsFromGMT(for: date))]
        while let next = zone.nextDaylightSavingTimeTransition(after: date), next < end {
            let offset = Int32(zone.secondsFromGMT(for: next))
            if offset != offsets.last {
                transitions.append(Int64(next.timeIntervalSince1970.rounded()))
                offsets.append(offset)
            }
            date = next
        }
        self.transitions = transitions
        self.offsets = offsets
    }

    /// The instants this type answers for: 0001-01-01 to 9999-12-31 (UTC). Others are held
    /// at the nearest end, so no instant a client or a feed can name traps the arithmetic
    /// (`RealtimeBounds` keeps feeds inside it; this is the second line).
    public static let instants: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    /// The UTC offset in seconds at `instant` (epoch seconds).
    public func offset(at instant: Int64) -> Int32 {
        // The first transition after the instant: the offset before it applies.
        var low = 0
        var high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= instant { low = mid + 1 } else { high = mid }
        }
        return offsets[low]
    }

    /// The instant a local wall-clock time (seconds since 1970-01-01 00:00 local) maps to.
    /// A repeated hour (clocks going back) gives its first occurrence; a time skipped by
    /// clocks going forward is moved forward by the gap (02:30 becomes 03:30), as most
    /// date libraries do.
    public func instant(localSeconds: Int64) -> Int64 {
        let localSeconds = localSeconds.clamped(to: Self.instants)
        // Zones never change offset twice within a day, so the offsets a day before and
        // after are the only candidates.
        let before = Int64(offset(at: localSeconds - 86_400))
        let after = Int64(offset(at: localSeconds + 86_400))
        let early = localSeconds - before
        let late = localSeconds - after
        let earlyValid = early + Int64(offset(at: early)) == localSeconds
        let lateValid = late + Int64(offset(at: late)) == localSeconds
        switch (earlyValid, lateValid) {
        case (true, true): return min(early, late)
        case (true, false): return early
        case (false, true): return late
        case (false, false): return early
        }
    }

    /// When the service day `day` starts: GTFS measures stop times from "noon minus 12h"
    /// of the service date in the agency's zone, which is midnight except on the days the
    /// clocks change.
    public func serviceDayStart(_ day: Int32) -> Int64 {
        let localNoon = Int64(day) * 86_400 + 43_200
        return instant(localSeconds: localNoon) - 43_200
    }

    /// The local calendar day of an instant.
    public func localDay(_ instant: Int64) -> Int32 {
        let instant = instant.clamped(to: Self.instants)
        let local = instant + Int64(offset(at: instant))
        return Int32(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
    }

    /// Seconds since local midnight of an instant.
    public func localSecondsOfDay(_ instant: Int64) -> Int32 {
        let instant = instant.clamped(to: Self.instants)
        let local = instant + Int64(offset(at: instant))
        let rest = local % 86_400
        return Int32(rest >= 0 ? rest : rest + 86_400)
    }

    /// `2025-11-12T08:35:00+11:00`: the instant in this zone's local time with its offset.
    public func iso8601(_ instant: Int64) -> String {
        let instant = instant.clamped(to: Self.instants)
        let offset = offset(at: instant)
        let local = instant + Int64(offset)
        let day = Int32(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        var seconds = Int(local - Int64(day) * 86_400)
        let (y, m, d) = ServiceDate.civil(day)
        let hours = seconds / 3600
        seconds %= 3600
        var text = ServiceDate.pad(y, 4) + "-" + ServiceDate.pad(m, 2) + "-" + ServiceDate.pad(d, 2)
        text += "T" + ServiceDate.pad(hours, 2) + ":" + ServiceDate.pad(seconds / 60, 2) + ":" + ServiceDate.pad(seconds % 60, 2)
        let sign = offset < 0 ? "-" : "+"
        let magnitude = Int(offset.magnitude)
        text += sign + ServiceDate.pad(magnitude / 3600, 2) + ":" + ServiceDate.pad(magnitude % 3600 / 60, 2)
        return text
    }
}
