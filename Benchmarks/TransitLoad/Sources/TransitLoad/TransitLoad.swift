import ArgumentParser
import Foundation
import HeraldGTFS

/// `TransitLoad load`: load a feed ready to answer (parse + index), then answer "the next N
/// departures at a stop after a time on a date" and repeat it for throughput, the same
/// measurement `Benchmarks/transit/peers/peer_departures.py` makes for the Python peers.
/// `TransitLoad csv`: read a CSV file with Herald's reader, SwiftCSV and CSV.swift.
@main
struct TransitLoad: ParsableCommand {
    static let configuration = CommandConfiguration(subcommands: [Load.self, CSVCompare.self, PlanLoad.self])
}

/// Peak and current resident memory of this process (bytes), from /proc/self/status.
func memory() -> (hwm: Int, rss: Int) {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    func value(_ key: String) -> Int {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return 0 }
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0) * 1024
    }
    return (value("VmHWM:"), value("VmRSS:"))
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func writeJSON(_ object: [String: Any], to path: String?) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    if let path { try data.write(to: URL(fileURLWithPath: path)) }
}

struct Load: ParsableCommand {
    @Option var feed: String
    @Option var stop: String
    @Option(help: "YYYYMMDD") var date: String
    @Option(help: "HH:MM:SS, local time of the feed's zone") var after: String
    @Option var limit = 10
    @Option var queries = 10_000
    @Option var out: String?

    func run() throws {
        let before = memory()
        let clock = ContinuousClock()
        let started = clock.now
        let archive = try FeedArchive(path: feed)
        let (parsed, report) = FeedParser.parse(archive, scope: .serving)
        guard let parsedFeed = parsed else { throw ValidationError("the feed does not load: \(report.sorted.prefix(3))") }
        let timetable = try Timetable(feed: parsedFeed)
        let loadSeconds = seconds(clock.now - started)
        let loaded = memory()
        guard let stop = timetable.stopsByID[self.stop], let day = ServiceDate.parse(date),
            let time = Array(after.utf8).withUnsafeBufferPointer({ GTFSValueParser.time($0) })
        else { throw ValidationError("unknown stop, date or time") }
        let at = timetable.zone.instant(localSeconds: Int64(day) * 86_400 + Int64(time))
        let board = DepartureBoard(timetable: timetable, overlay: .empty)
        let query = DepartureBoard.Query(stop: stop, at: at, limit: limit)
        let answer = board.departures(query)
        var latencies: [Double] = []
        latencies.reserveCapacity(queries)
        var checksum = 0
        let runStart = clock.now
        for _ in 0..<queries {
            let start = clock.now
            checksum &+= board.departures(query).count
            latencies.append(seconds(clock.now - start) * 1000)
        }
        let total = seconds(clock.now - runStart)
        latencies.sort()
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        let stopTimes = timetable.feed.stopTimes.count
        let result: [String: Any] = [
            "peer": "herald",
            "feed": feed,
            "load": ["seconds": loadSeconds, "what": "FeedArchive + FeedParser (serving scope) + Timetable (calendar, departure index, stop grid)"],
            "memory_bytes": [
                "vmhwm_before_load": before.hwm, "vmhwm_after_load": loaded.hwm, "vmrss_after_load": loaded.rss,
                "timetable_bytes": timetable.byteCount, "stop_times": stopTimes,
                "timetable_bytes_per_stop_time": Double(timetable.byteCount) / Double(max(1, stopTimes)),
            ],
            "departures": answer.map { row in
                [
                    "trip_id": row.tripID, "route_id": timetable.feed.routes[Int(row.route)].id,
                    "departure_time": timetable.zone.iso8601(row.scheduled), "service_date": ServiceDate.compact(row.day),
                    "stop_sequence": Int(timetable.feed.stopTimes.sequence[Int(row.position)]),
                ]
            },
            "throughput": ["queries": queries, "qps": Double(queries) / total, "p50_ms": percentile(0.5), "p99_ms": percentile(0.99), "checksum": checksum],
        ]
        try writeJSON(result, to: out)
        print(
            String(
                format: "herald: load %.3f s, VmHWM %.1f MiB (%.1f before), index %.1f B/stop_time, %.0f q/s, p50 %.4f ms, p99 %.4f ms, first %@",
                loadSeconds, Double(loaded.hwm) / 1_048_576, Double(before.hwm) / 1_048_576, Double(timetable.byteCount) / Double(max(1, stopTimes)),
                Double(queries) / total, percentile(0.5), percentile(0.99), answer.first?.tripID ?? "-"))
    }
}
