import Testing

@testable import HeraldGTFS

@Suite struct ServiceDateTests {
    @Test func roundTripsDates() {
        #expect(ServiceDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(ServiceDate.days(year: 2026, month: 3, day: 8) == 20_520)
        #expect(ServiceDate.civil(20_520) == (2026, 3, 8))
        #expect(ServiceDate.days(year: 2024, month: 2, day: 30) == nil)
        #expect(ServiceDate.days(year: 2024, month: 2, day: 29) != nil)
        #expect(ServiceDate.days(year: 2023, month: 2, day: 29) == nil)
        for day in Int32(-800)...Int32(30_000) {
            let (y, m, d) = ServiceDate.civil(day)
            #expect(ServiceDate.days(year: y, month: m, day: d) == day)
        }
    }

    @Test func weekdaysStartOnMonday() {
        // 2026-03-08 is a Sunday, 2026-03-04 a Wednesday.
        #expect(ServiceDate.weekday(ServiceDate.days(year: 2026, month: 3, day: 8)!) == 6)
        #expect(ServiceDate.weekday(ServiceDate.days(year: 2026, month: 3, day: 4)!) == 2)
        #expect(ServiceDate.weekday(0) == 3)
        #expect(ServiceDate.weekday(-1) == 2)
    }

    @Test func formatsAndParses() {
        let day = ServiceDate.days(year: 2007, month: 6, day: 4)!
        #expect(ServiceDate.compact(day) == "20070604")
        #expect(ServiceDate.iso(day) == "2007-06-04")
        #expect(ServiceDate.parse("20070604") == day)
        #expect(ServiceDate.parse("2007-06-04") == day)
        #expect(ServiceDate.parse("2007-6-04") == nil)
        #expect(ServiceDate.parse("20071304") == nil)
    }
}
