import Testing

@testable import HeraldGTFS

@Suite struct AgencyTimeZoneTests {
    func day(_ y: Int, _ m: Int, _ d: Int) -> Int32 { ServiceDate.days(year: y, month: m, day: d)! }
    /// Epoch seconds of a UTC wall time.
    func utc(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int = 0) -> Int64 { Int64(day(y, m, d)) * 86_400 + Int64(h * 3600 + min * 60) }

    @Test func serviceDayStartsAtNoonMinusTwelveHours() throws {
        let halifax = try #require(AgencyTimeZone(identifier: "America/Halifax", fromYear: 2026, toYear: 2026))
        // An ordinary day: local midnight AST (-04:00) = 04:00 UTC.
        #expect(halifax.serviceDayStart(day(2026, 3, 7)) == utc(2026, 3, 7, 4))
        // Clocks spring forward at 02:00 on 2026-03-08: noon is ADT (-03:00), so the day
        // starts at 03:00 UTC, an hour before local midnight.
        #expect(halifax.serviceDayStart(day(2026, 3, 8)) == utc(2026, 3, 8, 3))
        #expect(halifax.serviceDayStart(day(2026, 3, 9)) == utc(2026, 3, 9, 3))
        let sydney = try #require(AgencyTimeZone(identifier: "Australia/Sydney", fromYear: 2026, toYear: 2026))
        // Clocks fall back at 03:00 AEDT on 2026-04-05: noon is AEST (+10:00), so the day
        // starts at 14:00 UTC the day before = 01:00 AEDT.
        #expect(sydney.serviceDayStart(day(2026, 4, 5)) == utc(2026, 4, 4, 14))
        #expect(sydney.serviceDayStart(day(2026, 4, 4)) == utc(2026, 4, 3, 13))
    }

    @Test func formatsWithTheOffsetInForce() throws {
        let sydney = try #require(AgencyTimeZone(identifier: "Australia/Sydney", fromYear: 2025, toYear: 2025))
        #expect(sydney.iso8601(utc(2025, 11, 11, 21, 30)) == "2025-11-12T08:30:00+11:00")
        #expect(sydney.iso8601(utc(2025, 6, 1, 0)) == "2025-06-01T10:00:00+10:00")
        let halifax = try #require(AgencyTimeZone(identifier: "America/Halifax", fromYear: 2026, toYear: 2026))
        #expect(halifax.iso8601(utc(2026, 3, 8, 5, 59)) == "2026-03-08T01:59:00-04:00")
        #expect(halifax.iso8601(utc(2026, 3, 8, 6)) == "2026-03-08T03:00:00-03:00")
        let kolkata = try #require(AgencyTimeZone(identifier: "Asia/Kolkata", fromYear: 2025, toYear: 2025))
        #expect(kolkata.iso8601(0) == "1970-01-01T05:30:00+05:30")
    }

    @Test func localDaysAndWallTimes() throws {
        let halifax = try #require(AgencyTimeZone(identifier: "America/Halifax", fromYear: 2026, toYear: 2026))
        #expect(halifax.localDay(utc(2026, 3, 8, 3, 59)) == day(2026, 3, 7))
        #expect(halifax.localDay(utc(2026, 3, 8, 4)) == day(2026, 3, 8))
        // 02:30 does not exist on 2026-03-08: it moves forward to 03:30 ADT (06:30 UTC).
        #expect(halifax.instant(localSeconds: Int64(day(2026, 3, 8)) * 86_400 + 2 * 3600 + 1800) == utc(2026, 3, 8, 6, 30))
        let sydney = try #require(AgencyTimeZone(identifier: "Australia/Sydney", fromYear: 2026, toYear: 2026))
        // 02:30 on 2026-04-05 happens twice: the first (AEDT, 15:30 UTC the day before) is meant.
        #expect(sydney.instant(localSeconds: Int64(day(2026, 4, 5)) * 86_400 + 2 * 3600 + 1800) == utc(2026, 4, 4, 15, 30))
    }

    @Test func unknownZonesAreRefused() {
        #expect(AgencyTimeZone(identifier: "Mars/Olympus", fromYear: 2026, toYear: 2026) == nil)
    }
}
