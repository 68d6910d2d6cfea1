import ArgumentParser
import Foundation
import HeraldGTFS

/// `TransitLoad plan`: the journey planner on a real feed — the network's build time and
/// bytes per stop time, then random one-to-one earliest-arrival queries (stop to stop, leaving
/// between 06:00 and 20:00 on `date`) on one core: p50/p99 and queries/s, against a connection
/// scan (CSA, `HeraldGTFS.ConnectionScan`) over the same service days as the baseline (no peer
/// planner runs on these machines without a street network), checking both agree on every arrival.
struct PlanLoad: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "plan")

    @Option var feed: String
    @Option(help: "YYYYMMDD") var date: String
    @Option var queries = 2_000
    @Option(name: .customLong("baseline-queries")) var baselineQueries = 500
    @Option var seed: UInt64 = 23
    @Option var out: String?
    @Option(name: .customLong("pairs-out"), help: "write the queries and Herald's arrivals (seconds of the day) for the peer script")
    var pairsOut: String?
    @Option(name: .customLong("range-queries"), help: "range requests (an hour of departures, as `depart_until` plans them) to time")
    var rangeQueries = 200

    func run() throws {
        let clock = ContinuousClock()
        let archive = try FeedArchive(path: feed)
        let (parsed, report) = FeedParser.parse(archive, scope: .serving)
        guard let parsedFeed = parsed else { throw ValidationError("the feed does not load: \(report.sorted.prefix(3))") }
        let timetable = try Timetable(feed: parsedFeed)
        guard let day = ServiceDate.parse(date) else { throw ValidationError("--date is YYYYMMDD") }
        let built = clock.now
        let network = TransitNetwork(timetable: timetable)
        let buildSeconds = seconds(clock.now - built)
        let planner = JourneyPlanner(network: network, timetable: timetable)
        // As a server does when a feed version loads (`TransitLoader.planner`): the day's
        // service window is built before the first query.
        let windowBuilt = clock.now
        planner.prepare(around: timetable.zone.serviceDayStart(day) + 12 * 3600)
        let windowSeconds = seconds(clock.now - windowBuilt)
        let baseline = ConnectionScan(timetable: timetable, network: network, day: day)

        var random = SplitMix(seed: seed)
        let stops = Int32(timetable.feed.stops.count)
        let start = timetable.zone.serviceDayStart(day)
        let pairs: [(Int32, Int32, Int64)] = (0..<queries).map { _ in
            (Int32(random.next() % UInt64(stops)), Int32(random.next() % UInt64(stops)), start + Int64(6 * 3600 + random.next() % (14 * 3600)))
        }

        func measure(_ count: Int, _ answer: (Int32, Int32, Int64) -> Int64?) -> (latencies: [Double], total: Double, answers: [Int64?]) {
            var latencies: [Double] = []
            var answers: [Int64?] = []
            latencies.reserveCapacity(count)
            let runStart = clock.now
            for (from, to, at) in pairs.prefix(count) {
                let began = clock.now
                answers.append(answer(from, to, at))
                latencies.append(seconds(clock.now - began) * 1000)
            }
            return (latencies.sorted(), seconds(clock.now - runStart), answers)
        }
        func stats(_ run: (latencies: [Double], total: Double, answers: [Int64?])) -> [String: Any] {
            func percentile(_ p: Double) -> Double { run.latencies[min(run.latencies.count - 1, Int(Double(run.latencies.count) * p))] }
            return [
                "queries": run.latencies.count, "queries_per_second": Double(run.latencies.count) / run.total,
                "p50_ms": percentile(0.5), "p90_ms": percentile(0.9), "p99_ms": percentile(0.99), "p999_ms": percentile(0.999),
                "max_ms": run.latencies.last ?? 0,
                "found": run.answers.compactMap { $0 }.count,
            ]
        }
        if let debug = ProcessInfo.processInfo.environment["PLAN_DEBUG"] {
            let parts = debug.split(separator: ",").map(String.init)
            let from = timetable.stopsByID[parts[0]]!
            let to = timetable.stopsByID[parts[1]]!
            let at = Int64(parts[2])!
            var query = JourneyQuery(origins: [(from, 0)], destinations: [(to, 0)], departAt: at)
            query.maxTransfers = 8
            for journey in planner.plan(query) {
                print("journey arriving \(timetable.zone.iso8601(journey.arrival))")
                for leg in journey.legs {
                    switch leg {
                    case .walk(let a, let b, let d, let e):
                        print(
                            "  walk \(a.map { timetable.feed.stops[Int($0)].id } ?? "-") → \(b.map { timetable.feed.stops[Int($0)].id } ?? "-") \(timetable.zone.iso8601(d)) → \(timetable.zone.iso8601(e))"
                        )
                    case .ride(let ride):
                        let st = timetable.feed.stopTimes
                        print(
                            "  ride \(timetable.feed.trips[Int(ride.trip)].id) day \(ride.day) \(timetable.feed.stops[Int(st.stop[ride.board])].id)(pickup \(st.pickupType[ride.board])) → \(timetable.feed.stops[Int(st.stop[ride.alight])].id)(drop \(st.dropOffType[ride.alight])) \(timetable.zone.iso8601(ride.departure)) → \(timetable.zone.iso8601(ride.arrival))"
                        )
                    }
                }
            }
            print("scan:", baseline.earliestArrival(from: from, to: to, at: at).map { timetable.zone.iso8601($0) } ?? "none")
            for stop in parts.dropFirst(3) {
                let scan = baseline.earliestArrival(from: from, to: timetable.stopsByID[stop]!, at: at).map { timetable.zone.iso8601($0) } ?? "none"
                var probe = JourneyQuery(origins: [(from, 0)], destinations: [(timetable.stopsByID[stop]!, 0)], departAt: at)
                probe.maxTransfers = 8
                print("  at \(stop): scan \(scan), raptor \(planner.plan(probe).last.map { timetable.zone.iso8601($0.arrival) } ?? "none")")
            }
            return
        }
        let herald = measure(queries) { from, to, at in
            var query = JourneyQuery(origins: [(from, 0)], destinations: [(to, 0)], departAt: at)
            query.maxTransfers = 8
            return from == to ? at : planner.plan(query).last?.arrival
        }
        if let pairsOut {
            let rows: [[String: Any]] = zip(pairs, herald.answers).map { pair, answer in
                [
                    "from": timetable.feed.stops[Int(pair.0)].id, "to": timetable.feed.stops[Int(pair.1)].id, "second": Int(pair.2 - start),
                    "herald_arrival": answer.map { Int($0 - start) } as Any? ?? NSNull(),
                ]
            }
            try JSONSerialization.data(withJSONObject: rows).write(to: URL(fileURLWithPath: pairsOut))
        }
        // A range request as the server plans it (`ItineraryPlanner`, `depart_until` an hour
        // later): one search per departure found, each leaving a second after the last.
        var rangeSearches = 0
        var rangeDepartures = 0
        let range = measure(min(rangeQueries, queries)) { from, to, at in
            guard from != to else { return at }
            var time = at
            var last: Int64?
            while time <= at + 3600 {
                var query = JourneyQuery(origins: [(from, 0)], destinations: [(to, 0)], departAt: time)
                query.maxTransfers = 8
                rangeSearches += 1
                // A walk before the first ride leaves as late as that ride allows (as
                // `ItineraryPlanner.leavingLate` moves it), so the next search is after it.
                func leaves(_ journey: Journey) -> Int64 {
                    guard let first = journey.legs.firstIndex(where: { $0.ride != nil }), let ride = journey.legs[first].ride else { return journey.departure }
                    return ride.departure - journey.legs[..<first].reduce(0) { $0 + ($1.arrival - $1.departure) }
                }
                let leaving = planner.plan(query).filter { $0.rides > 0 && leaves($0) <= at + 3600 }
                guard let earliest = leaving.map(leaves).min() else { break }
                rangeDepartures += 1
                last = leaving.map(\.arrival).min()
                time = earliest + 1
            }
            return last
        }
        let csa = measure(baselineQueries) { from, to, at in from == to ? at : baseline.earliestArrival(from: from, to: to, at: at) }
        let differing = zip(pairs, zip(herald.answers, csa.answers)).filter { $0.1.0 != $0.1.1 }
        let disagreements = differing.count
        let samples = differing.prefix(10).map { pair, answers -> String in
            let (from, to, at) = pair
            func show(_ time: Int64?) -> String { time.map { timetable.zone.iso8601($0) } ?? "none" }
            return
                "\(timetable.feed.stops[Int(from)].id) → \(timetable.feed.stops[Int(to)].id) at \(show(at)): raptor \(show(answers.0)), scan \(show(answers.1))"
        }
        let result: [String: Any] = [
            "feed": feed, "date": date, "stops": Int(stops), "stop_times": timetable.feed.stopTimes.count,
            "network": [
                "build_seconds": buildSeconds, "patterns": network.patterns.count, "bytes_per_stop_time": network.bytesPerStopTime,
                "window_build_seconds": windowSeconds, "window_bytes": planner.windowBytes(around: timetable.zone.serviceDayStart(day) + 12 * 3600),
            ],
            "herald_raptor": stats(herald), "baseline_connection_scan": stats(csa),
            "herald_range_hour": stats(range).merging(["searches": rangeSearches, "departures_found": rangeDepartures]) { $1 },
            "baseline_connections": baseline.connectionCount,
            "compared": min(queries, baselineQueries), "disagreements": disagreements, "disagreement_samples": samples,
        ]
        let data = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        if let out { try data.write(to: URL(fileURLWithPath: out)) }
        if disagreements > 0 { throw ExitCode(1) }
    }
}

/// A seeded generator (SplitMix64), so a run can be repeated.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
