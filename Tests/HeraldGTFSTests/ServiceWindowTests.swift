import Foundation
import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// The planner's service windows and its reused buffers: a window holds exactly the runs of
/// the services running on its three days, on one time axis, in lanes no run overtakes in;
/// the cache keeps the windows used last; a search gives its buffers back with every cell it
/// wrote unreached again.
@Suite struct ServiceWindowTests {
    /// Every lane of `window`: its runs' (row, day) and, at each stop, its departures and
    /// arrivals never decrease from one run to the next (no run overtakes another).
    static func checkLanes(_ network: TransitNetwork, _ window: ServiceWindow) -> [[(row: Int, day: Int)]] {
        var lanes: [[(row: Int, day: Int)]] = []
        for lane in 0..<(window.laneRuns.count - 1) {
            let pattern = network.patterns[Int(window.lanePatterns[lane])]
            let runs = window.runCount(lane)
            let stops = pattern.stops.count
            let first = Int(window.laneRuns[lane])
            let members = (0..<runs).map { (Int(window.runRows[first + $0]), Int(window.runDays[first + $0])) }
            lanes.append(members)
            for index in 0..<stops {
                for (k, member) in members.enumerated() {
                    let offset = window.dayOffsets[member.1]
                    #expect(window.departures.base[window.laneTimes[lane] + index * runs + k] == offset + pattern.departure(trip: member.0, at: index))
                    #expect(window.rideTimes.base[2 * (window.laneTimes[lane] + k * stops + index)] == offset + pattern.arrival(trip: member.0, at: index))
                    #expect(
                        window.rideTimes.base[2 * (window.laneTimes[lane] + k * stops + index) + 1] == offset + pattern.departure(trip: member.0, at: index))
                    if k > 0 {
                        #expect(
                            window.departures.base[window.laneTimes[lane] + index * runs + k - 1]
                                <= window.departures.base[window.laneTimes[lane] + index * runs + k])
                        #expect(
                            window.rideTimes.base[2 * (window.laneTimes[lane] + (k - 1) * stops + index)]
                                <= window.rideTimes.base[2 * (window.laneTimes[lane] + k * stops + index)])
                    }
                }
            }
        }
        return lanes
    }

    @Test func aWindowHoldsExactlyItsDaysRunsInOrder() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let network = TransitNetwork(timetable: t)
        for (y, m, d) in [(2007, 6, 5), (2007, 6, 9), (2007, 6, 10)] {
            let day = t.zone.localDay(TimetableTests.local(t, y, m, d, 12, 0))
            let window = ServiceWindow(network: network, calendar: t.calendar, zone: t.zone, day: day)
            #expect(window.firstDay == day - 1 && window.dayStarts == (0..<3).map { t.zone.serviceDayStart(day - 1 + Int32($0)) })
            let lanes = Self.checkLanes(network, window)
            for (number, pattern) in network.patterns.enumerated() {
                let held = (Int(window.patternLanes[number])..<Int(window.patternLanes[number + 1])).flatMap { lanes[$0] }
                #expect((Int(window.patternLanes[number])..<Int(window.patternLanes[number + 1])).allSatisfy { window.lanePatterns[$0] == Int32(number) })
                // The day before's runs only where they still leave a stop within the hour
                // before the query's day starts (none on the sample feed: no trip runs past
                // midnight).
                let expected = (0..<3).flatMap { offset in
                    let words = t.calendar.words(day: day - 1 + Int32(offset))
                    return pattern.trips.indices.filter { row in
                        let service = Int(network.tripService[Int(pattern.trips[row])])
                        let late = pattern.stops.indices.contains { pattern.departure(trip: row, at: $0) >= window.dayOffsets[1] - 3600 }
                        return words[service >> 6] & (1 << UInt64(service & 63)) != 0 && (offset > 0 || late)
                    }.map { ($0, offset) }
                }
                #expect(!held.contains { $0.day == 0 })
                #expect(held.map { "\($0.row)/\($0.day)" }.sorted() == expected.map { "\($0.0)/\($0.1)" }.sorted(), "pattern \(number) around \(y)-\(m)-\(d)")
            }
        }
        // AAMV1 runs on weekends only: the window around Saturday 9 June holds it on the
        // Saturday and the Sunday, the one around Tuesday 5 June not at all.
        let aamv = t.feed.trips.firstIndex { $0.id == "AAMV1" }!
        let pattern = Int(network.tripPattern[aamv])
        func days(around: (Int, Int, Int)) -> [Int] {
            let window = ServiceWindow(
                network: network, calendar: t.calendar, zone: t.zone, day: t.zone.localDay(TimetableTests.local(t, around.0, around.1, around.2, 12, 0)))
            return (Int(window.patternLanes[pattern])..<Int(window.patternLanes[pattern + 1])).flatMap { lane in
                (Int(window.laneRuns[lane])..<Int(window.laneRuns[lane + 1])).filter { window.runRows[$0] == network.tripRow[aamv] }.map {
                    Int(window.runDays[$0])
                }
            }.sorted()
        }
        #expect(days(around: (2007, 6, 9)) == [1, 2] && days(around: (2007, 6, 5)).isEmpty)
    }

    /// S1 leaves A at 24:00 and is slow (B at 24:50); S2 leaves at 00:05 and is fast (B at
    /// 00:30). On one day they do not overtake; yesterday's S1 and today's S2 do.
    static let overtakingFeed: [String: String] = [
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nX,X,http://x.example,Europe/Berlin\n",
        "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\nA,A,52.5000,13.4000\nB,B,52.6000,13.4000\n",
        "routes.txt": "route_id,route_short_name,route_type\nR,1,3\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nS,1,1,1,1,1,1,1,20250101,20251231\n",
        "trips.txt": "route_id,service_id,trip_id\nR,S,S1\nR,S,S2\n",
        "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence
        S1,24:00:00,24:00:00,A,1
        S1,24:50:00,24:50:00,B,2
        S2,00:05:00,00:05:00,A,1
        S2,00:30:00,00:30:00,B,2

        """,
    ]

    @Test func runsThatOvertakeADayApartGoInOtherLanesAndTheFasterIsRidden() throws {
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(Self.overtakingFeed), scope: .full)
        let t = try Timetable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
        let network = TransitNetwork(timetable: t)
        #expect(network.patterns.count == 1, "one pattern: S2 then S1 on one day")
        let day = Int32(ServiceDate.days(year: 2025, month: 3, day: 11)!)
        let window = ServiceWindow(network: network, calendar: t.calendar, zone: t.zone, day: day)
        let lanes = Self.checkLanes(network, window)
        #expect(lanes.count == 2, "\(lanes)")
        // Leaving A at 23:59 the day before: yesterday's S1 leaves first (00:00) but today's
        // S2, leaving at 00:05, is at B at 00:30, twenty minutes earlier.
        let leave = t.zone.serviceDayStart(day - 1) + 23 * 3600 + 59 * 60
        let planner = JourneyPlanner(network: network, timetable: t)
        let journeys = planner.plan(JourneyPlannerTests.query(t, from: "A", to: "B", at: leave))
        let ride = try #require(journeys.last?.legs.first?.ride)
        #expect(t.feed.trips[Int(ride.trip)].id == "S2" && ride.day == day)
        #expect(journeys.last?.arrival == t.zone.serviceDayStart(day) + 30 * 60)
    }

    @Test func theCacheKeepsTheWindowsUsedLast() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let network = TransitNetwork(timetable: t)
        let cache = ServiceWindowCache(capacity: 3)
        var built: [Int32] = []
        func ask(_ day: Int32) -> ServiceWindow {
            cache.window(day: day) {
                built.append(day)
                return ServiceWindow(network: network, calendar: t.calendar, zone: t.zone, day: day)
            }
        }
        let start = t.zone.localDay(TimetableTests.local(t, 2007, 6, 5, 12, 0))
        for offset in Int32(0)..<3 { #expect(ask(start + offset).firstDay == start + offset - 1) }
        _ = ask(start)  // used again: the day after it is now the least recently used
        _ = ask(start + 3)
        #expect(cache.days == [start, start + 2, start + 3])
        _ = ask(start)
        #expect(built == [start, start + 1, start + 2, start + 3], "a held window is not built again")
    }

    @Test func aSearchGivesItsBuffersBackUnreached() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let planner = JourneyPlannerTests.planner(t)
        let journeys = planner.plan(JourneyPlannerTests.query(t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: TimetableTests.local(t, 2007, 6, 5, 7, 50)))
        #expect(!journeys.isEmpty)
        let stops = planner.network.stopCount
        let lanes = planner.window(around: TimetableTests.local(t, 2007, 6, 5, 7, 50)).laneCount
        let buffers = planner.buffers.take(stopCount: stops, laneCount: lanes, rounds: 5)
        func all<T>(_ memory: UnsafeMutablePointer<T>, _ count: Int, _ check: (T) -> Bool) -> Bool { (0..<count).allSatisfy { check(memory[$0]) } }
        #expect(buffers.stopCount == stops && buffers.cellCount >= 6 * stops)
        #expect(
            all(buffers.arrivals, buffers.cellCount) { $0 == RaptorSearch.unreached }
                && all(buffers.rideArrivals, buffers.cellCount) { $0 == RaptorSearch.unreached })
        #expect(all(buffers.best, stops) { $0 == RaptorSearch.unreached } && all(buffers.bestRide, stops) { $0 == RaptorSearch.unreached })
        let words = (buffers.cellCount / stops) * buffers.words
        #expect(all(buffers.improved, words) { $0 == 0 } && all(buffers.rode, words) { $0 == 0 } && all(buffers.queueIndex, lanes) { $0 == .max })
        // Labels are not reset (read only where the same search wrote the arrival), so the
        // search wrote some: the reset found its cells through the round bits.
        #expect(!all(buffers.labels, buffers.cellCount) { if case .none = $0 { true } else { false } })
        planner.buffers.give(buffers)
        // The same question again on the reused buffers gets the same answer.
        let again = planner.plan(JourneyPlannerTests.query(t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: TimetableTests.local(t, 2007, 6, 5, 7, 50)))
        #expect(again.map(\.arrival) == journeys.map(\.arrival))
    }
}
