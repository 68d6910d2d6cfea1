import Foundation
import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// The planner's per-day runs and its reused buffers: a day holds exactly the runs of the
/// services running that day, the cache keeps the days used last, and a search gives its
/// buffers back with every cell it wrote unreached again.
@Suite struct ServiceDayRunsTests {
    @Test func aDayHoldsExactlyItsRunsWithTheirDepartures() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let network = TransitNetwork(timetable: t)
        for (y, m, d) in [(2007, 6, 5), (2007, 6, 9), (2007, 6, 10)] {
            let day = t.zone.localDay(TimetableTests.local(t, y, m, d, 12, 0))
            let runs = ServiceDayRuns(network: network, calendar: t.calendar, day: day)
            let words = t.calendar.words(day: day)
            var held = 0
            for (number, pattern) in network.patterns.enumerated() {
                let first = Int(runs.rowStart[number])
                let rows = (0..<runs.runCount(number)).map { Int(runs.rows[first + $0]) }
                let expected = pattern.trips.indices.filter { row in
                    let service = Int(network.tripService[Int(pattern.trips[row])])
                    return words[service >> 6] & (1 << UInt64(service & 63)) != 0
                }
                #expect(rows == expected, "pattern \(number) on \(y)-\(m)-\(d)")
                for index in pattern.stops.indices {
                    for (k, row) in rows.enumerated() {
                        #expect(runs.departures[runs.departureStart[number] + index * rows.count + k] == pattern.departure(trip: row, at: index))
                    }
                }
                held += rows.count
            }
            #expect(held > 0, "every day of the sample feed has service")
        }
        let tuesday = ServiceDayRuns(network: network, calendar: t.calendar, day: t.zone.localDay(TimetableTests.local(t, 2007, 6, 5, 12, 0)))
        let saturday = ServiceDayRuns(network: network, calendar: t.calendar, day: t.zone.localDay(TimetableTests.local(t, 2007, 6, 9, 12, 0)))
        // AAMV1 runs on weekends only: the Saturday holds it, the Tuesday does not.
        let aamv = t.feed.trips.firstIndex { $0.id == "AAMV1" }!
        let pattern = Int(network.tripPattern[aamv])
        let row = network.tripRow[aamv]
        func holds(_ runs: ServiceDayRuns) -> Bool {
            let first = Int(runs.rowStart[pattern])
            return (0..<runs.runCount(pattern)).contains { runs.rows[first + $0] == row }
        }
        #expect(holds(saturday) && !holds(tuesday))
    }

    @Test func theCacheKeepsTheDaysUsedLast() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let network = TransitNetwork(timetable: t)
        let cache = ServiceDayCache(capacity: 3)
        var built: [Int32] = []
        func ask(_ day: Int32) -> ServiceDayRuns {
            cache.runs(day: day) {
                built.append(day)
                return ServiceDayRuns(network: network, calendar: t.calendar, day: day)
            }
        }
        let start = t.zone.localDay(TimetableTests.local(t, 2007, 6, 5, 12, 0))
        for offset in Int32(0)..<3 { #expect(ask(start + offset).day == start + offset) }
        _ = ask(start)  // used again: the day after it is now the least recently used
        _ = ask(start + 3)
        #expect(cache.days == [start, start + 2, start + 3])
        _ = ask(start)
        #expect(built == [start, start + 1, start + 2, start + 3], "a held day is not built again")
    }

    @Test func aSearchGivesItsBuffersBackUnreached() async throws {
        let t = try await TimetableTests.timetable(try TransitFixtures.sampleFeedPath())
        let planner = JourneyPlannerTests.planner(t)
        let journeys = planner.plan(JourneyPlannerTests.query(t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: TimetableTests.local(t, 2007, 6, 5, 7, 50)))
        #expect(!journeys.isEmpty)
        let buffers = planner.buffers.take()
        #expect(buffers.stopCount == planner.network.stopCount && buffers.touched.isEmpty)
        #expect(buffers.arrivals.allSatisfy { $0 == RaptorSearch.unreached } && buffers.rideArrivals.allSatisfy { $0 == RaptorSearch.unreached })
        #expect(buffers.best.allSatisfy { $0 == RaptorSearch.unreached } && buffers.bestRide.allSatisfy { $0 == RaptorSearch.unreached })
        #expect(!buffers.marked.contains(true) && buffers.queueIndex.allSatisfy { $0 == .max })
        #expect(buffers.labels.allSatisfy { if case .none = $0 { true } else { false } })
        planner.buffers.give(buffers)
        // The same question again on the reused buffers gets the same answer.
        let again = planner.plan(JourneyPlannerTests.query(t, from: "BEATTY_AIRPORT", to: "FUR_CREEK_RES", at: TimetableTests.local(t, 2007, 6, 5, 7, 50)))
        #expect(again.map(\.arrival) == journeys.map(\.arrival))
    }
}
