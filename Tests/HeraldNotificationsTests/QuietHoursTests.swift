import Foundation
import HeraldNotifications
import Testing

private func time(_ text: String) throws -> LocalTime {
    try #require(LocalTime(parsing: text))
}

private func window(_ start: String, _ end: String) throws -> QuietHours {
    QuietHours(start: try time(start), end: try time(end))
}

private func instant(_ iso: String) throws -> Date {
    try #require(ISO8601DateFormatter().date(from: iso))
}

private let sydney = TimeZone(identifier: "Australia/Sydney")

@Suite struct LocalTimeTests {
    @Test(arguments: [("00:00", 0, 0), ("23:59", 23, 59), ("07:05", 7, 5), ("22:30", 22, 30)])
    func parsesHHMM(text: String, hour: Int, minute: Int) throws {
        let parsed = try time(text)
        #expect(parsed.hour == hour && parsed.minute == minute)
        #expect(parsed.text == text)
        #expect(parsed.minutesSinceMidnight == hour * 60 + minute)
    }

    @Test(arguments: ["24:00", "7:00", "07:60", "", "07:00:00", "ab:cd", " 07:00", "07:00 ", "07-00", "０７:００", "-1:00"])
    func refusesAnythingElse(text: String) {
        #expect(LocalTime(parsing: text) == nil)
    }

    @Test func rangeChecksComponents() {
        #expect(LocalTime(hour: 24, minute: 0) == nil)
        #expect(LocalTime(hour: 0, minute: 60) == nil)
        #expect(LocalTime(hour: -1, minute: 0) == nil)
        #expect(LocalTime(hour: 9, minute: 3)?.text == "09:03")
    }

    @Test func ordersByTimeOfDay() throws {
        #expect(try time("09:59") < time("10:00"))
        #expect(try time("00:00") < time("23:59"))
        #expect(try !(time("12:00") < time("12:00")))
    }

    @Test func codesAsItsText() throws {
        let preference = ["start": try time("22:30")]
        let data = try JSONEncoder().encode(preference)
        #expect(String(decoding: data, as: UTF8.self) == #"{"start":"22:30"}"#)
        #expect(try JSONDecoder().decode([String: LocalTime].self, from: data) == preference)
    }

    @Test func decodingInvalidTextIsDataCorrupted() {
        let data = Data(#"["24:00"]"#.utf8)
        do {
            _ = try JSONDecoder().decode([LocalTime].self, from: data)
            Issue.record("decoded 24:00")
        } catch DecodingError.dataCorrupted {
        } catch {
            Issue.record("expected dataCorrupted, got \(error)")
        }
    }
}

@Suite struct QuietHoursTests {
    @Test func sameDayWindowIsHalfOpen() throws {
        let office = try window("09:00", "17:00")
        #expect(try !office.contains(time("08:59")))
        #expect(try office.contains(time("09:00")))
        #expect(try office.contains(time("16:59")))
        #expect(try !office.contains(time("17:00")))
    }

    @Test func windowSpanningMidnight() throws {
        let night = try window("22:00", "07:00")
        for inside in ["22:00", "23:59", "00:00", "06:59"] {
            #expect(try night.contains(time(inside)), "\(inside)")
        }
        for outside in ["21:59", "07:00", "12:00"] {
            #expect(try !night.contains(time(outside)), "\(outside)")
        }
    }

    @Test func equalStartAndEndIsEmpty() throws {
        let empty = try window("08:00", "08:00")
        #expect(empty.isEmpty)
        for text in ["00:00", "07:59", "08:00", "08:01", "23:59"] {
            #expect(try !empty.contains(time(text)), "\(text)")
        }
    }

    @Test func codesStartAndEndAsText() throws {
        let night = try window("22:00", "07:00")
        let data = try JSONEncoder().encode(night)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(object == ["start": "22:00", "end": "07:00"])
        #expect(try JSONDecoder().decode(QuietHours.self, from: data) == night)
    }

    @Test(arguments: [
        ("2026-07-15T20:30:00Z", true),  // 06:30 AEST
        ("2026-07-15T21:30:00Z", false),  // 07:30 AEST
        ("2026-07-15T11:59:00Z", false),  // 21:59 AEST
        ("2026-07-15T12:00:00Z", true),  // 22:00 AEST
    ])
    func sydneyWinter(iso: String, inside: Bool) throws {
        let zone = try #require(sydney)
        #expect(try window("22:00", "07:00").contains(instant(iso), timeZone: zone) == inside)
    }

    /// Sydney springs forward 02:00 AEST → 03:00 AEDT on Sunday 2026-10-04 (2026-10-03T16:00Z).
    @Test(arguments: [
        ("2026-10-03T20:30:00Z", false),  // 07:30 AEDT; a fixed +10 offset would say 06:30, inside
        ("2026-10-03T19:30:00Z", true),  // 06:30 AEDT
        ("2026-10-03T15:30:00Z", true),  // 01:30 AEST, before the gap
        ("2026-10-03T16:30:00Z", true),  // 03:30 AEDT, after the gap
    ])
    func sydneyDaylightSavingStarts(iso: String, inside: Bool) throws {
        let zone = try #require(sydney)
        #expect(try window("22:00", "07:00").contains(instant(iso), timeZone: zone) == inside)
    }

    /// Sydney falls back 03:00 AEDT → 02:00 AEST on Sunday 2026-04-05 (2026-04-04T16:00Z).
    @Test(arguments: [
        ("2026-04-04T20:30:00Z", true),  // 06:30 AEST; a fixed +11 offset would say 07:30, outside
        ("2026-04-04T19:30:00Z", true),  // 05:30 AEST
        ("2026-04-04T21:00:00Z", false),  // 07:00 AEST
        ("2026-04-04T11:30:00Z", true),  // 22:30 AEDT
    ])
    func sydneyDaylightSavingEnds(iso: String, inside: Bool) throws {
        let zone = try #require(sydney)
        #expect(try window("22:00", "07:00").contains(instant(iso), timeZone: zone) == inside)
    }

    @Test func readsTheWallClockInTheGivenZone() throws {
        let zone = try #require(sydney)
        #expect(LocalTime(of: try instant("2026-10-03T20:30:00Z"), in: zone).text == "07:30")
        #expect(LocalTime(of: try instant("2026-10-03T15:59:00Z"), in: zone).text == "01:59")
        #expect(LocalTime(of: try instant("2026-10-03T16:00:00Z"), in: zone).text == "03:00")
        #expect(LocalTime(of: try instant("2026-04-04T15:30:00Z"), in: zone).text == "02:30")
        #expect(LocalTime(of: try instant("2026-04-04T16:30:00Z"), in: zone).text == "02:30")
    }

    @Test func nextEndIsTheLocalEndTimeAcrossTheDaylightSavingChange() throws {
        let zone = try #require(sydney)
        let night = try window("22:00", "07:00")
        // 01:30 AEST; the window ends at 07:00 AEDT, 5½ hours of elapsed time later, not 6½.
        #expect(try night.nextEnd(after: instant("2026-10-03T15:30:00Z"), timeZone: zone) == instant("2026-10-03T20:00:00Z"))
        // 22:30 AEDT the evening before clocks fall back; ends at 07:00 AEST.
        #expect(try night.nextEnd(after: instant("2026-04-04T11:30:00Z"), timeZone: zone) == instant("2026-04-04T21:00:00Z"))
        // The very last inside minute (06:59:30 AEST) ends 30 seconds later, not tomorrow.
        #expect(try night.nextEnd(after: instant("2026-07-15T20:59:30Z"), timeZone: zone) == instant("2026-07-15T21:00:00Z"))
    }

    @Test func nextEndIsNilOutsideTheWindow() throws {
        let zone = try #require(sydney)
        let night = try window("22:00", "07:00")
        #expect(try night.nextEnd(after: instant("2026-10-03T20:30:00Z"), timeZone: zone) == nil)  // 07:30 AEDT
        #expect(try night.nextEnd(after: instant("2026-07-15T21:00:00Z"), timeZone: zone) == nil)  // 07:00 AEST exactly
        #expect(try window("08:00", "08:00").nextEnd(after: instant("2026-07-15T22:00:00Z"), timeZone: zone) == nil)
    }

    @Test func anEndInsideTheSpringForwardGapEndsWhenTheGapDoes() throws {
        let zone = try #require(sydney)
        // 02:30 does not exist on 2026-10-04 in Sydney: 01:59:59 AEST is followed by 03:00 AEDT.
        let ending = try window("22:00", "02:30")
        let start = try instant("2026-10-03T15:30:00Z")  // 01:30 AEST
        let end = try #require(ending.nextEnd(after: start, timeZone: zone))
        #expect(end == (try instant("2026-10-03T16:00:00Z")))  // 03:00 AEDT
        #expect(end > start && end.timeIntervalSince(start) < 3600)
    }
}
