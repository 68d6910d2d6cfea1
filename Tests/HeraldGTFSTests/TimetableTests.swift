import Foundation
import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// Departures from the in-memory index, checked against answers worked out by hand from
/// the feeds' text (see each test).
@Suite struct TimetableTests {
    /// The timetable of the feed at `path`, built once per test process (`GTFSFixtures`).
    static func timetable(_ path: String) async throws -> Timetable { try await GTFSFixtures.timetable(path) }

    /// Epoch seconds of a wall time in the timetable's zone.
    static func local(_ t: Timetable, _ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int, _ s: Int = 0) -> Int64 {
        GTFSFixtures.local(t, y, m, d, h, min, s)
    }

    static func board(_ t: Timetable, stop: String, at: Int64, limit: Int = 10, route: String? = nil, direction: Int8? = nil) -> [DepartureBoard.Row] {
        let query = DepartureBoard.Query(stop: t.stopsByID[stop]!, at: at, limit: limit, route: route.map { t.routesByID[$0]! }, directionID: direction)
        return DepartureBoard(timetable: t, overlay: .empty).departures(query)
    }

    static func describe(_ t: Timetable, _ rows: [DepartureBoard.Row]) -> [String] {
        rows.map { "\($0.tripID)@\(t.zone.iso8601($0.scheduled))" }
    }

    @Test func frequencyTripsExpandIntoRuns() async throws {
        let t = try await Self.timetable(try GTFSTestData.sampleFeedPath())
        // Tuesday 2007-06-05 (FULLW runs). At STAGECOACH: STBA every 30 min from 06:00 and
        // CITY1 every 10 min from 08:00 to 09:59:59 (CITY2 ends there: not a departure).
        let rows = Self.board(t, stop: "STAGECOACH", at: Self.local(t, 2007, 6, 5, 8, 55), limit: 6)
        #expect(
            Self.describe(t, rows) == [
                "CITY1@2007-06-05T09:00:00-07:00", "STBA@2007-06-05T09:00:00-07:00", "CITY1@2007-06-05T09:10:00-07:00",
                "CITY1@2007-06-05T09:20:00-07:00", "CITY1@2007-06-05T09:30:00-07:00", "STBA@2007-06-05T09:30:00-07:00",
            ])
        // The run's other stops shift with it: CITY1's 09:10 run reaches NADAV at 09:24 (06:14 + 3:10).
        let nadav = Self.board(t, stop: "NADAV", at: Self.local(t, 2007, 6, 5, 9, 20), limit: 2, route: "CITY", direction: 0)
        #expect(Self.describe(t, nadav) == ["CITY1@2007-06-05T09:24:00-07:00", "CITY1@2007-06-05T09:34:00-07:00"])
        // STBA's last run starts 21:30 (22:00 is the end, not a start); after it, tomorrow's first.
        let late = Self.board(t, stop: "STAGECOACH", at: Self.local(t, 2007, 6, 5, 21, 45), limit: 2, route: "STBA")
        #expect(Self.describe(t, late) == ["STBA@2007-06-06T06:00:00-07:00", "STBA@2007-06-06T06:30:00-07:00"])
    }

    @Test func calendarDatesRemoveAServiceDay() async throws {
        let t = try await Self.timetable(try GTFSTestData.sampleFeedPath())
        // calendar_dates.txt removes FULLW on Monday 2007-06-04; WE does not run on Mondays:
        // the first departure after 00:00 is Tuesday's AB1 (STBA and AB2 end at the airport).
        let rows = Self.board(t, stop: "BEATTY_AIRPORT", at: Self.local(t, 2007, 6, 4, 0, 0), limit: 1)
        #expect(Self.describe(t, rows) == ["AB1@2007-06-05T08:00:00-07:00"])
        // Saturday 2007-06-09: WE runs too (AAMV1 at 08:00 beside AB1).
        let saturday = Self.board(t, stop: "BEATTY_AIRPORT", at: Self.local(t, 2007, 6, 9, 7, 59), limit: 2)
        #expect(Self.describe(t, saturday) == ["AAMV1@2007-06-09T08:00:00-07:00", "AB1@2007-06-09T08:00:00-07:00"])
    }

    @Test func calendarDatesAddAServiceDayAndTripsRunPastMidnight() throws {
        var files = GTFSTestData.minimalFiles
        files["calendar.txt"] = "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20260101,20261231\n"
        files["calendar_dates.txt"] = "service_id,date,exception_type\nWK,20260307,1\nWK,20260309,2\n"
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(files))
        let t = try Timetable(feed: try #require(feed, "\(report.sorted)"))
        // Saturday 2026-03-07 is added: T1a leaves Central platform 1 at 08:00 (AEDT, +11:00).
        let added = Self.board(t, stop: "CEN", at: Self.local(t, 2026, 3, 7, 7, 0), limit: 1)
        #expect(Self.describe(t, added) == ["T1a@2026-03-07T08:00:00+11:00"])
        // T1b of Friday 2026-03-06 leaves at 25:10:00, i.e. 01:10 on Saturday.
        let night = Self.board(t, stop: "CEN", at: Self.local(t, 2026, 3, 7, 0, 30), limit: 1)
        #expect(Self.describe(t, night) == ["T1b@2026-03-07T01:10:00+11:00"])
        #expect(night.first.map { ServiceDate.iso($0.day) } == "2026-03-06")
        // Within the next 48 hours after Saturday's 08:00 run only its 25:10 run (Sunday 01:10) leaves.
        let rest = Self.board(t, stop: "CEN", at: Self.local(t, 2026, 3, 7, 8, 1), limit: 3)
        #expect(Self.describe(t, rest) == ["T1b@2026-03-08T01:10:00+11:00"])
        // Monday 2026-03-09 is removed (its 08:00 and its 25:10): from Monday 00:00 the next
        // is Tuesday's 08:00 (Tuesday's 25:10 is past the 48-hour horizon)…
        let monday = Self.board(t, stop: "CEN", at: Self.local(t, 2026, 3, 9, 0, 0), limit: 2)
        #expect(Self.describe(t, monday) == ["T1a@2026-03-10T08:00:00+11:00"])
        // …and Tuesday's 25:10 follows it.
        let tuesday = Self.board(t, stop: "CEN", at: Self.local(t, 2026, 3, 10, 8, 1), limit: 1)
        #expect(Self.describe(t, tuesday) == ["T1b@2026-03-11T01:10:00+11:00"])
        // A station's board lists its platforms' departures with the platform.
        #expect(t.feed.stops[Int(rest[0].stop)].platformCode == "1")
        // The route serving a platform also serves its station.
        #expect(t.routesByStop[Int(t.stopsByID["CEN"]!)] == [t.routesByID["T1"]!])
    }

    @Test func theDSTChangeDayCountsFromNoonMinusTwelveHours() throws {
        var files = GTFSTestData.minimalFiles
        // Australia/Sydney falls back from 03:00 AEDT to 02:00 AEST on Sunday 2026-04-05.
        files["stop_times.txt"] =
            "trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1a,00:30:00,00:30:00,TH,1\nT1a,04:00:00,04:00:00,WY,2\nT1b,12:00:00,12:00:00,TH,1\nT1b,12:10:00,12:10:00,WY,2\n"
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(files))
        let t = try Timetable(feed: try #require(feed, "\(report.sorted)"))
        let rows = Self.board(t, stop: "TH", at: Self.local(t, 2026, 4, 4, 23, 0), limit: 2)
        // The service day 2026-04-05 starts at noon AEST − 12 h = 14:00 UTC on the 4th =
        // 01:00 AEDT, so 00:30:00 is 01:30 AEDT (a midnight reading would say 00:30).
        #expect(Self.describe(t, rows) == ["T1a@2026-04-05T01:30:00+11:00", "T1b@2026-04-05T12:00:00+10:00"])
    }
}
