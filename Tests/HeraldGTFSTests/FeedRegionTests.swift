import Foundation
import Testing

@testable import HeraldGTFS

/// A region made of two agencies' feeds: one network, ids kept apart by feed, a journey
/// that rides one agency, walks, and rides the other.
@Suite struct FeedRegionTests {
    /// City buses: B1 from Harbour (H) to Market (M) at 08:00–08:10, weekdays; one agency
    /// without an id, so its route names none.
    static let buses: [String: String] = [
        "agency.txt": "agency_name,agency_url,agency_timezone\nCity Buses,https://buses.example,Europe/Berlin\n",
        "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\n1,Harbour,52.5000,13.4000\n2,\"Market, north side\",52.5200,13.4000\n",
        "routes.txt": "route_id,route_short_name,route_type\n1,B1,3\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20250101,20251231\n",
        "trips.txt": "route_id,service_id,trip_id\n1,WK,1\n",
        "stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n1,08:00:00,08:00:00,1,1\n1,08:10:00,08:10:00,2,2\n",
        "feed_info.txt": "feed_publisher_name,feed_publisher_url,feed_lang\nBuses,https://buses.example,de\n",
    ]

    /// Regional rail, its own ids colliding with the buses' (stop 1, route 1, trip 1, WK):
    /// R1 from Market station (150 m from the bus stop) to Airport at 08:20–08:45.
    static let rail: [String: String] = [
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nDB,Rail,https://rail.example,Europe/Berlin\n",
        "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\n1,Market station,52.5213,13.4005\n2,Airport,52.6000,13.5000\n",
        "routes.txt": "route_id,agency_id,route_short_name,route_type\n1,DB,R1,2\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20250101,20251231\n",
        "trips.txt": "route_id,service_id,trip_id\n1,WK,1\n",
        "stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n1,08:20:00,08:20:00,1,1\n1,08:45:00,08:45:00,2,2\n",
        "feed_info.txt": "feed_publisher_name,feed_publisher_url,feed_lang\nRail,https://rail.example,de\n",
    ]

    static func region() throws -> FeedArchive {
        try FeedRegion.merge([("bus", try GTFSTestData.archive(buses)), ("rail", try GTFSTestData.archive(rail))])
    }

    @Test func idsAreKeptApartByFeedAndEveryRowIsKept() throws {
        let (feed, report) = FeedParser.parse(try Self.region(), scope: .full)
        let parsed = try #require(feed, "\(report.sorted.prefix(3))")
        #expect(!report.sorted.contains { $0.severity == .error }, "\(report.sorted.prefix(3))")
        #expect(parsed.stops.map(\.id).sorted() == ["bus:1", "bus:2", "rail:1", "rail:2"])
        #expect(parsed.stops.first { $0.id == "bus:2" }?.name == "Market, north side")
        #expect(parsed.agencies.map(\.id) == ["bus:agency", "rail:DB"])
        #expect(parsed.routes.map(\.id) == ["bus:1", "rail:1"])
        #expect(parsed.trips.map(\.id) == ["bus:1", "rail:1"])
        #expect(parsed.stopTimes.count == 4)
        // Each trip keeps its own agency's calendar: the buses' weekdays, the rail's every day.
        let timetable = try Timetable(feed: parsed)
        let saturday = Int32(ServiceDate.days(year: 2025, month: 3, day: 15)!)
        let busTrip = try #require(timetable.tripsByID["bus:1"])
        let railTrip = try #require(timetable.tripsByID["rail:1"])
        #expect(!timetable.calendar.isActive(service: parsed.trips[Int(busTrip)].service, day: saturday))
        #expect(timetable.calendar.isActive(service: parsed.trips[Int(railTrip)].service, day: saturday))
    }

    @Test func aJourneyRidesOneAgencyWalksAndRidesTheOther() throws {
        let (feed, report) = FeedParser.parse(try Self.region(), scope: .full)
        let t = try Timetable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
        let planner = JourneyPlanner(network: TransitNetwork(timetable: t), timetable: t)
        let monday = Int32(ServiceDate.days(year: 2025, month: 3, day: 10)!)
        let leave = t.zone.serviceDayStart(monday) + 7 * 3600 + 55 * 60
        let journeys = planner.plan(JourneyQuery(origins: [(t.stopsByID["bus:1"]!, 0)], destinations: [(t.stopsByID["rail:2"]!, 0)], departAt: leave))
        let legs = try #require(journeys.last?.legs)
        #expect(legs.count == 3)
        #expect(legs.first?.ride.map { t.feed.trips[Int($0.trip)].id } == "bus:1")
        guard case .walk(let from?, let to?, _, _) = legs[1] else {
            Issue.record("\(legs)")
            return
        }
        #expect(t.feed.stops[Int(from)].id == "bus:2" && t.feed.stops[Int(to)].id == "rail:1")
        #expect(legs.last?.ride.map { t.feed.trips[Int($0.trip)].id } == "rail:1")
        #expect(journeys.last?.arrival == t.zone.serviceDayStart(monday) + 8 * 3600 + 45 * 60)
    }

    @Test func feedInfoIsTheFirstFeedsAndBadRegionsAreRefused() throws {
        let merged = try Self.region()
        let info = String(decoding: try #require(try merged.read("feed_info.txt")), as: UTF8.self)
        #expect(info == "feed_publisher_name,feed_publisher_url,feed_lang\nBuses,https://buses.example,de\n")
        var elsewhere = Self.rail
        elsewhere["agency.txt"] = "agency_id,agency_name,agency_url,agency_timezone\nDB,Rail,https://rail.example,Europe/London\n"
        #expect(throws: FeedRegion.MergeError.timeZones(["Europe/Berlin", "Europe/London"])) {
            try FeedRegion.merge([("bus", try GTFSTestData.archive(Self.buses)), ("rail", try GTFSTestData.archive(elsewhere))])
        }
        for name in ["", "a:b", "a b"] {
            #expect(throws: FeedRegion.MergeError.badName(name)) { try FeedRegion.merge([(name, try GTFSTestData.archive(Self.buses))]) }
        }
        #expect(throws: FeedRegion.MergeError.badName("bus")) {
            try FeedRegion.merge([("bus", try GTFSTestData.archive(Self.buses)), ("bus", try GTFSTestData.archive(Self.rail))])
        }
        #expect(throws: FeedRegion.MergeError.noFeeds) { try FeedRegion.merge([]) }
        var agencyless = Self.rail
        agencyless["agency.txt"] = nil
        #expect(throws: FeedRegion.MergeError.unreadable("x: no agency.txt")) { try FeedRegion.merge([("x", try GTFSTestData.archive(agencyless))]) }
    }

    /// Quoting: a value with a comma, a quote or spaces at its ends comes back the same.
    @Test func valuesThatNeedQuotesSurvive() {
        #expect(FeedRegion.quoted("plain") == "plain")
        #expect(FeedRegion.quoted("a,b") == "\"a,b\"")
        #expect(FeedRegion.quoted("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(FeedRegion.quoted(" padded ") == "\" padded \"")
    }
}
