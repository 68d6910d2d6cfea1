import Foundation
import Testing

@testable import HeraldGTFS

/// The real feeds scripts/transit-data fetches, with answers computed by hand from their
/// text (Python's csv module, independently of Herald and of the peers).
@Suite struct RealFeedTests {
    @Test func halifaxNextTenAfterEightOnAWednesday() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("halifax.zip"))
        #expect(t.feed.stops.count == 2381)
        #expect(t.feed.stopTimes.count == 327_575)
        #expect(t.feed.trips.count == 9253)
        #expect(t.feed.stops.filter { $0.locationType == .station }.count == 11)
        #expect(t.feed.stops.filter { $0.parent >= 0 }.count == 60)
        // Stop 6121, Wednesday 2026-03-04 (services 236.0.3, 245.0.5 and 236.1141.3 added by calendar_dates).
        let rows = TimetableTests.board(t, stop: "6121", at: TimetableTests.local(t, 2026, 3, 4, 8, 0))
        #expect(
            rows.map { "\($0.tripID) \(t.feed.routes[Int($0.route)].id) \(t.zone.iso8601($0.scheduled))" } == [
                "4316764 9B 2026-03-04T08:03:39-04:00", "4302268 10B 2026-03-04T08:07:03-04:00", "4302727 127 2026-03-04T08:07:20-04:00",
                "4301771 1 2026-03-04T08:07:25-04:00", "4313214 8 2026-03-04T08:12:13-04:00", "4316353 9A 2026-03-04T08:13:28-04:00",
                "4302025 10A 2026-03-04T08:15:03-04:00", "4312480 7B 2026-03-04T08:16:36-04:00", "4301772 1 2026-03-04T08:17:25-04:00",
                "4302577 10C 2026-03-04T08:22:03-04:00",
            ])
        #expect(rows.first?.headsign == "9B DOWNTOWN VIA SPRING GARDEN")
        #expect(rows.first?.directionID == 1)
    }

    @Test func halifaxAcrossTheSpringForward() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("halifax.zip"))
        // Saturday 2026-03-07's trips past 24:00 run into the night of the change (02:00 AST →
        // 03:00 ADT); the 03-08 service day then starts at noon ADT − 12 h = 03:00 UTC.
        let night = TimetableTests.board(t, stop: "6121", at: TimetableTests.local(t, 2026, 3, 8, 0, 0), limit: 12)
        #expect(
            TimetableTests.describe(t, night) == [
                "4302474@2026-03-08T00:11:44-04:00", "4301552@2026-03-08T00:13:00-04:00", "4316164@2026-03-08T00:16:59-04:00",
                "4312918@2026-03-08T00:22:09-04:00", "4301553@2026-03-08T00:28:00-04:00", "4301554@2026-03-08T00:43:00-04:00",
                "4316631@2026-03-08T00:47:07-04:00", "4301555@2026-03-08T00:58:00-04:00", "4312919@2026-03-08T01:22:09-04:00",
                "4302508@2026-03-08T06:10:57-03:00", "4301631@2026-03-08T06:11:35-03:00", "4312256@2026-03-08T06:17:04-03:00",
            ])
        #expect(night.prefix(9).allSatisfy { ServiceDate.iso($0.day) == "2026-03-07" })
        // 06:10:57 on the change day is 09:10:57 UTC.
        #expect(night[9].scheduled == Int64(ServiceDate.days(year: 2026, month: 3, day: 8)!) * 86_400 + 9 * 3600 + 10 * 60 + 57)
    }

    @Test func cairnsAfterMidnightLeavesOutDropOffOnlyStops() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("cairns.zip"))
        #expect(t.zone.identifier == "Australia/Brisbane")
        // Saturday 2014-05-31 at James Cook University (750047) after 23:30: 13 stop times, of
        // which the 110N runs (pickup_type 1, drop-off only) are not departures.
        let rows = TimetableTests.board(t, stop: "750047", at: TimetableTests.local(t, 2014, 5, 31, 23, 30), limit: 4)
        #expect(
            TimetableTests.describe(t, rows) == [
                "CNS2014-CNS_MUL-Saturday-00-4165969@2014-05-31T23:41:00+10:00", "CNS2014-CNS_MUL-Saturday-00-4166196@2014-06-01T00:09:00+10:00",
                "CNS2014-CNS_MUL-Saturday-00-4166213@2014-06-01T00:11:00+10:00", "CNS2014-CNS_MUL-Saturday-00-4165970@2014-06-01T00:41:00+10:00",
            ])
        #expect(rows.dropFirst().allSatisfy { ServiceDate.iso($0.day) == "2014-05-31" })
        // Its 65 untimed stop times were interpolated between their timepoints.
        let untimed = (0..<t.feed.stopTimes.count).filter { t.feed.stopTimes.given[$0] & 3 == 0 }
        #expect(untimed.count == 65)
        #expect(untimed.allSatisfy { t.feed.stopTimes.departure[$0] >= t.feed.stopTimes.departure[$0 - 1] })
    }

    @Test func barrieRunsOnCalendarDatesAlone() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("barrie.zip"))
        #expect(t.feed.calendars.isEmpty)
        #expect(t.feed.serviceIDs.count == 4)
        let terminal = "935fa928-c730-4461-be27-c006ff2a43b6"
        let day = try #require(t.calendar.days)
        let firstDay = day.lowerBound
        let rows = TimetableTests.board(t, stop: terminal, at: t.zone.serviceDayStart(firstDay) + 12 * 3600, limit: 5)
        #expect(rows.count == 5)
        #expect(rows.allSatisfy { t.calendar.isActive(service: t.feed.trips[Int($0.trip)].service, day: $0.day) })
    }

    @Test func nycSubwayStationsAndTransfers() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("nyc_subway.zip"))
        #expect(t.feed.transfers.count == 87)
        let stations = t.feed.stops.indices.filter { t.feed.stops[$0].locationType == .station }
        #expect(!stations.isEmpty)
        #expect(stations.allSatisfy { t.childrenByStop[Int32($0)]?.count == 2 })
    }
}
