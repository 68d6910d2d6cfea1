import Foundation
import HeraldGeo
import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// Journeys on a real city feed (Halifax Transit, 2,381 stops, 327,575 stop times), each
/// checked by hand against its text files:
///
/// - stop_times.txt: `4308498,11:59:00,…,2203,1` and `4308498,12:13:00,…,8172,19`;
///   `4310856,12:28:59,…,7213,30` and `4310856,12:46:00,…,8953,51`; `4305444,24:00:00,…,7351,34`
///   and `4305444,24:07:00,…,7614,35`.
/// - trips.txt: 4308498 and 4310856 run on service 236.0.3 (weekdays), 4305444 on 236.0.1
///   (Saturdays); every trip says `wheelchair_accessible` 0 (no information).
/// - stops.txt: 8172 Micmac Terminal Bay 2 (44.685684, -63.561247) and 7213 Micmac Blvd After
///   Horizon Ct (44.686693, -63.56355), 212 m apart; 7614 and 7605, Bridge Terminal bays 14 and 5.
@Suite struct JourneyPlannerHalifaxTests {
    static func rides(_ t: Timetable, _ journey: Journey) -> [String] {
        journey.legs.map { leg in
            switch leg {
            case .ride(let ride):
                let stop = t.feed.stopTimes.stop
                return "\(t.feed.trips[Int(ride.trip)].id) \(t.feed.stops[Int(stop[ride.board])].id)→\(t.feed.stops[Int(stop[ride.alight])].id)"
            case .walk(let from, let to, let departure, let arrival):
                return "walk \(from.map { t.feed.stops[Int($0)].id } ?? "-")→\(to.map { t.feed.stops[Int($0)].id } ?? "-") \(arrival - departure) s"
            }
        }
    }

    static func query(_ t: Timetable, _ from: String, _ to: String, _ at: Int64) -> JourneyQuery {
        JourneyQuery(origins: [(t.stopsByID[from]!, 0)], destinations: [(t.stopsByID[to]!, 0)], departAt: at)
    }

    @Test func directTransferFootpathAfterMidnightCancelledWheelchairAndNoRoute() async throws {
        let (t, network, _, _) = try await JourneyPlannerTests.halifax.value
        let planner = JourneyPlanner(network: network, timetable: t)
        // Wednesday 4 March 2026, 11:50 (AST, UTC−4).
        let wednesday = TimetableTests.local(t, 2026, 3, 4, 11, 50)

        // A direct trip: 4308498 from 2203 at 11:59 to 8172 at 12:13.
        let direct = planner.plan(Self.query(t, "2203", "8172", wednesday))
        #expect(direct.map { Self.rides(t, $0) } == [["4308498 2203→8172"]])
        #expect(direct.first?.departure == TimetableTests.local(t, 2026, 3, 4, 11, 59) && direct.first?.arrival == TimetableTests.local(t, 2026, 3, 4, 12, 13))

        // A transfer by a footpath: 4308498 to Micmac Terminal, 212 m on foot to 7213 (× 1.3 at
        // 1.2 m/s = 232 s), 4310856 at 12:28:59 to 8953 at 12:46.
        let meters = Haversine.distanceMeters(GeoPoint(latitude: 44.685684, longitude: -63.561247), GeoPoint(latitude: 44.686693, longitude: -63.56355))
        #expect(network.walking.seconds(meters: meters) == 232)
        let transfer = planner.plan(Self.query(t, "2203", "8953", wednesday))
        #expect(transfer.last.map { Self.rides(t, $0) } == ["4308498 2203→8172", "walk 8172→7213 232 s", "4310856 7213→8953"])
        #expect(transfer.last?.arrival == TimetableTests.local(t, 2026, 3, 4, 12, 46))
        #expect(transfer.last?.transfers == 1)

        // After midnight: Saturday 7 March at 23:58, 4305444 leaves 7351 at the service day's
        // 24:00:00 (Sunday 00:00) and reaches Bridge Terminal bay 14 at 24:07, then 69 s to bay 5.
        let saturday = TimetableTests.local(t, 2026, 3, 7, 23, 58)
        let late = planner.plan(Self.query(t, "7351", "7605", saturday))
        #expect(late.last.map { Self.rides(t, $0) } == ["4305444 7351→7614", "walk 7614→7605 69 s"])
        let night = try #require(late.last?.legs.first?.ride)
        #expect(night.day == t.zone.localDay(saturday))
        #expect(night.departure == TimetableTests.local(t, 2026, 3, 8, 0, 0) && night.arrival == TimetableTests.local(t, 2026, 3, 8, 0, 7))

        // 4308498 cancelled today: another way, later, never that run.
        var cancelled = Self.query(t, "2203", "8172", wednesday)
        cancelled.cancelled = [TripDay(trip: t.tripsByID["4308498"]!, day: t.zone.localDay(wednesday))]
        let avoided = planner.plan(cancelled)
        #expect(!avoided.isEmpty)
        #expect(avoided.allSatisfy { journey in journey.arrival > TimetableTests.local(t, 2026, 3, 4, 12, 13) })
        #expect(
            avoided.allSatisfy { journey in !journey.legs.contains { $0.ride?.trip == t.tripsByID["4308498"] && $0.ride?.day == t.zone.localDay(wednesday) } })

        // Wheelchair only: Halifax marks no trip accessible (0 = no information), so nothing.
        var wheelchair = Self.query(t, "2203", "8172", wednesday)
        wheelchair.wheelchairOnly = true
        #expect(planner.plan(wheelchair).isEmpty)

        // No route: no trip serves 2203 and then 8953, and they are kilometres apart, so
        // without a change there is none.
        let times = t.feed.stopTimes
        let (a, b) = (t.stopsByID["2203"]!, t.stopsByID["8953"]!)
        let direct8953 = (0..<Int32(t.feed.trips.count)).contains { trip in
            let stops = times.range(trip: trip).map { times.stop[$0] }
            guard let first = stops.firstIndex(of: a) else { return false }
            return stops[first...].contains(b)
        }
        #expect(!direct8953)
        var noChange = Self.query(t, "2203", "8953", wednesday)
        noChange.maxTransfers = 0
        #expect(planner.plan(noChange).isEmpty)
    }
}
