import Foundation
import HeraldCore
import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// The planner on the sample feed with realtime data laid over it, frequency-based trips,
/// and a walk alone. Times by hand from stop_times.txt: AB1 BEATTY_AIRPORT 8:00 → BULLFROG
/// arr 8:10 (dep 8:15); BFC1 BULLFROG 8:20 → FUR_CREEK_RES 9:20; STBA STAGECOACH 6:00 →
/// BEATTY_AIRPORT 6:20, run every 30 minutes from 6:00 to 22:00 (frequencies.txt).
@Suite struct JourneyPlannerRealtimeTests {
    typealias Overlay = RealtimeOverlayTests

    static func realtimeQuery(_ t: Timetable, from: String, to: String, at: Int64, _ entities: [TransitRealtime_FeedEntity]) throws -> JourneyQuery {
        var query = JourneyPlannerTests.query(t, from: from, to: to, at: at)
        query.realtime = try Overlay.overlay(Overlay.message(entities), t, now: at)
        return query
    }

    @Test func aDelayedTripIsRiddenAtItsPredictedTimesAndAMissedConnectionIsNotOffered() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let planner = JourneyPlannerTests.planner(t)
        let leave = TimetableTests.local(t, 2007, 6, 5, 7, 50)
        // Five minutes late: AB1 reaches Bullfrog at 8:15, a minute to spare for BFC1 at 8:20.
        let late = try Self.realtimeQuery(
            t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: leave, [Overlay.update("u", trip: "AB1", date: "20070605", [Overlay.stop(1, delay: 300)])])
        let caught = planner.plan(late)
        #expect(caught.map { JourneyPlannerTests.rides(t, $0) } == [["AB1 BEATTY_AIRPORT→BULLFROG", "BFC1 BULLFROG→FUR_CREEK_RES"]])
        let first = try #require(caught.first?.legs.first?.ride)
        #expect(first.departure == TimetableTests.local(t, 2007, 6, 5, 8, 5) && first.arrival == TimetableTests.local(t, 2007, 6, 5, 8, 15))
        #expect(caught.first?.arrival == TimetableTests.local(t, 2007, 6, 5, 9, 20))
        // Ten minutes late: at Bullfrog 8:20, no minute to change; BFC1 runs once a day, so
        // the answer is tomorrow's pair, never today's missed connection.
        let later = try Self.realtimeQuery(
            t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: leave, [Overlay.update("u", trip: "AB1", date: "20070605", [Overlay.stop(1, delay: 600)])])
        let missed = planner.plan(later)
        #expect(missed.map(\.arrival) == [TimetableTests.local(t, 2007, 6, 6, 9, 20)])
        #expect(missed.first?.legs.last?.ride.map { t.feed.trips[Int($0.trip)].id } == "BFC1")
        #expect(missed.first?.legs.last?.ride?.day == t.zone.localDay(leave) + 1)
        // Without the realtime data the planner keeps today's connection.
        #expect(
            planner.plan(JourneyPlannerTests.query(t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: leave)).map(\.arrival) == [
                TimetableTests.local(t, 2007, 6, 5, 9, 20)
            ])
    }

    @Test func cancelledTripsAndSkippedStopsAreNotUsed() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let planner = JourneyPlannerTests.planner(t)
        let leave = TimetableTests.local(t, 2007, 6, 5, 7, 50)
        let cancelled = try Self.realtimeQuery(
            t, from: "BEATTY_AIRPORT", to: "BULLFROG", at: leave, [Overlay.update("c", trip: "AB1", date: "20070605", relationship: .canceled, [])])
        #expect(planner.plan(cancelled).map(\.arrival) == [TimetableTests.local(t, 2007, 6, 6, 8, 10)])
        // AB1 skips Bullfrog: nobody gets off there today.
        let skipped = try Self.realtimeQuery(
            t, from: "BEATTY_AIRPORT", to: "BULLFROG", at: leave, [Overlay.update("s", trip: "AB1", date: "20070605", [Overlay.stop(2, skipped: true)])])
        #expect(planner.plan(skipped).map(\.arrival) == [TimetableTests.local(t, 2007, 6, 6, 8, 10)])
        // CITY1 runs every 10 minutes from 8:00 (frequencies.txt; stop times 6:00 Stagecoach,
        // NADAV arr 6:12, DADAN arr 6:19). The 8:10 run skips NADAV: to NADAV the 8:20 run
        // (at 8:32), not the first run leaving (which never stops there); to DADAN the 8:10
        // run still serves (at 8:29).
        var skipNADAV = Overlay.update("s", trip: "CITY1", date: "20070605", [Overlay.stop(3, skipped: true)])
        skipNADAV.tripUpdate.trip.startTime = "08:10:00"
        let morning = TimetableTests.local(t, 2007, 6, 5, 8, 5)
        let toNADAV = planner.plan(try Self.realtimeQuery(t, from: "STAGECOACH", to: "NADAV", at: morning, [skipNADAV]))
        #expect(toNADAV.map(\.arrival) == [TimetableTests.local(t, 2007, 6, 5, 8, 32)])
        let runOf820: Int32 = 8 * 3600 + 20 * 60 - 6 * 3600
        let runOf810: Int32 = 8 * 3600 + 10 * 60 - 6 * 3600
        #expect(toNADAV.first?.legs.first?.ride?.shift == runOf820)
        let toDADAN = planner.plan(try Self.realtimeQuery(t, from: "STAGECOACH", to: "DADAN", at: morning, [skipNADAV]))
        #expect(toDADAN.map(\.arrival) == [TimetableTests.local(t, 2007, 6, 5, 8, 29)])
        #expect(toDADAN.first?.legs.first?.ride?.shift == runOf810)
        #expect(
            planner.plan(JourneyPlannerTests.query(t, from: "STAGECOACH", to: "NADAV", at: morning)).map(\.arrival) == [
                TimetableTests.local(t, 2007, 6, 5, 8, 22)
            ])
        // Another day's run of AB1 is not touched by today's cancellation.
        let tomorrow = try Self.realtimeQuery(
            t, from: "BEATTY_AIRPORT", to: "BULLFROG", at: leave + 86_400, [Overlay.update("c", trip: "AB1", date: "20070605", relationship: .canceled, [])])
        #expect(planner.plan(tomorrow).map(\.arrival) == [TimetableTests.local(t, 2007, 6, 6, 8, 10)])
    }

    @Test func aFrequencyBasedTripRunsEveryHeadway() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let planner = JourneyPlannerTests.planner(t)
        // STBA's stop times say 6:00; frequencies.txt runs it every 30 minutes: at 6:10 the
        // next run leaves at 6:30 and arrives at 6:50.
        let journeys = planner.plan(JourneyPlannerTests.query(t, from: "STAGECOACH", to: "BEATTY_AIRPORT", at: TimetableTests.local(t, 2007, 6, 5, 6, 10)))
        let ride = try #require(journeys.first?.legs.first?.ride)
        #expect(journeys.count == 1 && t.feed.trips[Int(ride.trip)].id == "STBA")
        #expect(ride.shift == 1800)
        #expect(ride.departure == TimetableTests.local(t, 2007, 6, 5, 6, 30) && ride.arrival == TimetableTests.local(t, 2007, 6, 5, 6, 50))
        // The last run leaves at 21:30 (runs start before 22:00): at 21:40 the next is tomorrow's 6:00.
        let late = planner.plan(JourneyPlannerTests.query(t, from: "STAGECOACH", to: "BEATTY_AIRPORT", at: TimetableTests.local(t, 2007, 6, 5, 21, 40)))
        #expect(late.first?.legs.first?.ride?.departure == TimetableTests.local(t, 2007, 6, 6, 6, 0))
    }

    @Test func aDestinationAFootpathAwayIsAWalkAlone() throws {
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(JourneyPlannerTests.smallFeed), scope: .full)
        let t = try Timetable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
        let planner = JourneyPlannerTests.planner(t)
        let leave = t.zone.instant(localSeconds: Int64(ServiceDate.days(year: 2025, month: 3, day: 10)!) * 86_400 + 12 * 3600)
        let journeys = planner.plan(JourneyPlannerTests.query(t, from: "B", to: "C", at: leave))
        #expect(journeys.count == 1)
        guard case .walk(let from?, let to?, let departure, let arrival)? = journeys.first?.legs.first, journeys.first?.legs.count == 1 else {
            Issue.record("\(journeys)")
            return
        }
        #expect(t.feed.stops[Int(from)].id == "B" && t.feed.stops[Int(to)].id == "C")
        #expect(departure == leave && arrival == leave + 217)
        #expect(journeys.first?.rides == 0)
    }
}
