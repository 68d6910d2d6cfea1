import ArgumentParser
import CSV
import Foundation
import HeraldGTFS
import SwiftCSV

/// Reads one CSV file (a member of a GTFS zip) with Herald's reader and with the two CSV
/// libraries in the package mirror, each producing every field of every row as a `String`
/// (what a GTFS reader must at least do), and Herald's reader also the way the importer
/// uses it (ids as strings, numbers and times parsed in place). Best of `--runs`.
struct CSVCompare: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "csv")

    @Option var feed: String
    @Option var file = "stop_times.txt"
    @Option var runs = 3
    @Option var out: String?

    func run() throws {
        guard let bytes = try FeedArchive(path: feed).read(file) else { throw ValidationError("no \(file) in the feed") }
        let text = String(decoding: bytes, as: UTF8.self)
        let clock = ContinuousClock()
        func best(_ body: () throws -> Int) rethrows -> (seconds: Double, rows: Int) {
            var fastest = Double.infinity
            var rows = 0
            for _ in 0..<runs {
                let start = clock.now
                rows = try body()
                fastest = min(fastest, seconds(clock.now - start))
            }
            return (fastest, rows)
        }
        let heraldStrings = try best {
            let csv = try CSVFile(name: file, bytes: bytes)
            var count = 0
            var length = 0
            try csv.forEachRecord { record in
                for field in 0..<record.fieldCount { length &+= record.string(field).utf8.count }
                count += 1
            }
            return count + (length & 0)
        }
        let heraldTyped = try best {
            let csv = try CSVFile(name: file, bytes: bytes)
            let trip = csv.column("trip_id") ?? 0
            let stop = csv.column("stop_id") ?? 3
            let arrival = csv.column("arrival_time") ?? 1
            let departure = csv.column("departure_time") ?? 2
            let sequence = csv.column("stop_sequence") ?? 4
            var count = 0
            var sum = 0
            try csv.forEachRecord { record in
                sum &+= record.string(trip).utf8.count &+ record.string(stop).utf8.count
                sum &+= Int(record.time(arrival) ?? 0) &+ Int(record.time(departure) ?? 0) &+ (record.integer(sequence) ?? 0)
                count += 1
            }
            return count + (sum & 0)
        }
        let swiftCSV = try best {
            let csv = try SwiftCSV.CSV<Enumerated>(string: text, delimiter: .comma, loadColumns: false)
            var length = 0
            for row in csv.rows { for field in row { length &+= field.utf8.count } }
            return csv.rows.count + (length & 0)
        }
        let csvSwift = try best {
            let reader = try CSVReader(string: text, hasHeaderRow: true)
            var count = 0
            var length = 0
            while let row = reader.next() {
                for field in row { length &+= field.utf8.count }
                count += 1
            }
            return count + (length & 0)
        }
        let results: [(String, (seconds: Double, rows: Int))] = [
            ("herald_strings", heraldStrings), ("herald_typed", heraldTyped), ("swiftcsv_0.10.0", swiftCSV), ("csv.swift_2.5.2", csvSwift),
        ]
        var object: [String: Any] = ["file": file, "bytes": bytes.count, "runs": runs]
        for (name, result) in results {
            object[name] = ["seconds": result.seconds, "rows": result.rows, "rows_per_second": Double(result.rows) / result.seconds]
            print(String(format: "%@: %.3f s, %d rows, %.0f rows/s", name, result.seconds, result.rows, Double(result.rows) / result.seconds))
        }
        try writeJSON(object, to: out)
    }
}
