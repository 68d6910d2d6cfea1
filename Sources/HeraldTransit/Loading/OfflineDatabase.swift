import Crypto
import Foundation
import HeraldGTFS
import HeraldStorage
import Logging
import SQLKit

/// The app's offline timetable (the transit design's `/gtfs/version` download, a `.db` the
/// iOS app opens with SQLite): stops, routes, their stop patterns, and the trips and stop
/// times of the next `days` service days, made once at import and served by every node.
///
/// Why Herald makes it rather than shipping the GTFS zip: an app cannot answer "next
/// departures here" from a zip without parsing every file on the phone; this file is indexed
/// for that question (`pattern_stops (stop_id)` → `trips (pattern_id)` → `stop_times`) and
/// holds only the days the app can use before the next version, so it stays a few MB.
/// Why at import: every node then serves the same bytes (one size, one sha256) from the
/// database, however many nodes there are, and no request pays for building it.
///
/// Schema version 1 (`meta.schema_version`); `docs/transit-offline.md` documents each table.
public enum OfflineDatabase {
    public static let schemaVersion = 1

    public struct Built: Sendable, Equatable {
        public var bytes: Data
        public var sha256: String
        /// The service days it covers.
        public var days: ClosedRange<Int32>
    }

    static let schema = [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE agencies (agency_id TEXT, name TEXT NOT NULL, url TEXT NOT NULL, timezone TEXT NOT NULL, phone TEXT)",
        """
        CREATE TABLE stops (stop_id TEXT PRIMARY KEY, code TEXT, name TEXT, lat REAL, lon REAL, location_type INTEGER NOT NULL,
            parent_station TEXT, platform_code TEXT, wheelchair_boarding INTEGER NOT NULL)
        """,
        """
        CREATE TABLE routes (route_id TEXT PRIMARY KEY, agency_id TEXT, short_name TEXT, long_name TEXT, type INTEGER NOT NULL,
            color TEXT, text_color TEXT, sort_order INTEGER)
        """,
        "CREATE TABLE patterns (pattern_id INTEGER PRIMARY KEY, route_id TEXT NOT NULL, direction_id INTEGER NOT NULL, stop_count INTEGER NOT NULL)",
        "CREATE TABLE pattern_stops (pattern_id INTEGER NOT NULL, position INTEGER NOT NULL, stop_id TEXT NOT NULL, PRIMARY KEY (pattern_id, position))",
        "CREATE INDEX pattern_stops_stop ON pattern_stops (stop_id)",
        """
        CREATE TABLE trips (trip_id TEXT PRIMARY KEY, pattern_id INTEGER NOT NULL, service_id TEXT NOT NULL, headsign TEXT, short_name TEXT,
            wheelchair_accessible INTEGER NOT NULL)
        """,
        "CREATE INDEX trips_pattern ON trips (pattern_id)",
        // Seconds from the service day's noon minus 12 h (GTFS times: past 24:00 for a late run).
        """
        CREATE TABLE stop_times (trip_id TEXT NOT NULL, position INTEGER NOT NULL, arrival INTEGER NOT NULL, departure INTEGER NOT NULL,
            PRIMARY KEY (trip_id, position)) WITHOUT ROWID
        """,
        "CREATE TABLE frequencies (trip_id TEXT NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, headway_secs INTEGER NOT NULL, exact_times INTEGER NOT NULL)",
        "CREATE TABLE service_dates (date TEXT NOT NULL, service_id TEXT NOT NULL, PRIMARY KEY (date, service_id))",
    ]

    /// Builds the file for `timetable` (its feed as served) from `today` (the agency's local
    /// day) for `days` days, in a temporary file that is read back and removed.
    public static func build(
        _ timetable: Timetable, feedName: String, version: String, versionID: String, generatedAt: Int64, today: Int32, days: Int, logger: Logger
    ) async throws -> Built {
        let covered = today...(today + Int32(max(1, days)) - 1)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-offline-\(UUID().uuidString).db").path
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let file = try await SQLiteDatabase.open(path: path, logger: logger)
        do {
            try await file.withConnection { db in
                // One self-contained file: no write-ahead log beside it.
                try await db.raw("PRAGMA journal_mode = DELETE").run()
                try await db.raw("PRAGMA page_size = 4096").run()
            }
            let rows = Rows(timetable, covered: covered)
            try await file.transaction { db in
                for statement in schema { try await db.raw(SQLQueryString(statement)).run() }
                let meta: [[SQLLiteralValue]] = [
                    ["schema_version", .text(String(schemaVersion))], ["feed", .text(feedName)], ["version", .text(version)],
                    ["version_id", .text(versionID)], ["timezone", .text(timetable.zone.identifier)],
                    ["generated_at", .text(timetable.zone.iso8601(generatedAt / 1000))],
                    ["service_start_date", .text(ServiceDate.iso(covered.lowerBound))], ["service_end_date", .text(ServiceDate.iso(covered.upperBound))],
                ]
                try await insert(db, "meta", ["key", "value"], meta)
                try await insert(db, "agencies", ["agency_id", "name", "url", "timezone", "phone"], rows.agencies)
                try await insert(
                    db, "stops", ["stop_id", "code", "name", "lat", "lon", "location_type", "parent_station", "platform_code", "wheelchair_boarding"],
                    rows.stops)
                try await insert(db, "routes", ["route_id", "agency_id", "short_name", "long_name", "type", "color", "text_color", "sort_order"], rows.routes)
                try await insert(db, "patterns", ["pattern_id", "route_id", "direction_id", "stop_count"], rows.patterns)
                try await insert(db, "pattern_stops", ["pattern_id", "position", "stop_id"], rows.patternStops)
                try await insert(db, "trips", ["trip_id", "pattern_id", "service_id", "headsign", "short_name", "wheelchair_accessible"], rows.trips)
                try await insert(db, "stop_times", ["trip_id", "position", "arrival", "departure"], rows.stopTimes)
                try await insert(db, "frequencies", ["trip_id", "start_time", "end_time", "headway_secs", "exact_times"], rows.frequencies)
                try await insert(db, "service_dates", ["date", "service_id"], rows.serviceDates)
            }
            try await file.withConnection { db in try await db.raw("VACUUM").run() }
        } catch {
            await file.close()
            throw error
        }
        await file.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return Built(bytes: bytes, sha256: SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(), days: covered)
    }

    /// A value of one cell.
    enum SQLLiteralValue: Sendable, ExpressibleByStringLiteral {
        case text(String)
        case integer(Int)
        case real(Double)
        case null

        init(stringLiteral value: String) { self = .text(value) }
        static func optional(_ text: String?) -> SQLLiteralValue { text.map(SQLLiteralValue.text) ?? .null }
    }

    /// Multi-row INSERTs of at most 400 rows (under SQLite's bound-parameter limit).
    static func insert(_ db: any SQLDatabase, _ table: String, _ columns: [String], _ rows: [[SQLLiteralValue]]) async throws {
        for chunk in rows.chunked(400) {
            var query = SQLQueryString("INSERT INTO ")
            query.appendInterpolation(unsafeRaw: table + " (" + columns.joined(separator: ", ") + ") VALUES ")
            for (index, row) in chunk.enumerated() {
                query.appendInterpolation(unsafeRaw: index == 0 ? "(" : ", (")
                for (column, value) in row.enumerated() {
                    if column > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                    switch value {
                    case .text(let text): query.appendInterpolation(bind: text)
                    case .integer(let number): query.appendInterpolation(bind: number)
                    case .real(let number): query.appendInterpolation(bind: number)
                    case .null: query.appendInterpolation(unsafeRaw: "NULL")
                    }
                }
                query.appendInterpolation(unsafeRaw: ")")
            }
            try await db.raw(query).run()
        }
    }

    /// The rows, worked out from the timetable: only trips running on a covered day, and
    /// only the patterns, stop times and frequencies of those trips.
    struct Rows {
        var agencies: [[SQLLiteralValue]] = []
        var stops: [[SQLLiteralValue]] = []
        var routes: [[SQLLiteralValue]] = []
        var patterns: [[SQLLiteralValue]] = []
        var patternStops: [[SQLLiteralValue]] = []
        var trips: [[SQLLiteralValue]] = []
        var stopTimes: [[SQLLiteralValue]] = []
        var frequencies: [[SQLLiteralValue]] = []
        var serviceDates: [[SQLLiteralValue]] = []

        init(_ t: Timetable, covered: ClosedRange<Int32>) {
            let feed = t.feed
            agencies = feed.agencies.map { [.optional($0.id), .text($0.name), .text($0.url), .text($0.timezone), .optional($0.phone)] }
            stops = feed.stops.map { stop in
                [
                    .text(stop.id), .optional(stop.code), .optional(stop.name), stop.latitude.map(SQLLiteralValue.real) ?? .null,
                    stop.longitude.map(SQLLiteralValue.real) ?? .null, .integer(Int(stop.locationType.rawValue)),
                    stop.parent >= 0 ? .text(feed.stops[Int(stop.parent)].id) : .null, .optional(stop.platformCode), .integer(Int(stop.wheelchairBoarding)),
                ]
            }
            routes = feed.routes.map { route in
                [
                    .text(route.id), .optional(route.agencyID), .optional(route.shortName), .optional(route.longName), .integer(route.type),
                    .optional(route.color), .optional(route.textColor), route.sortOrder.map(SQLLiteralValue.integer) ?? .null,
                ]
            }
            var running: Set<Int32> = []
            for service in feed.serviceIDs.indices {
                for day in covered where t.calendar.isActive(service: Int32(service), day: day) {
                    running.insert(Int32(service))
                    serviceDates.append([.text(ServiceDate.iso(day)), .text(feed.serviceIDs[service])])
                }
            }
            serviceDates.sort { lhs, rhs in
                if case .text(let a) = lhs[0], case .text(let b) = rhs[0], a != b { return a < b }
                if case .text(let a) = lhs[1], case .text(let b) = rhs[1] { return a < b }
                return false
            }
            struct PatternKey: Hashable {
                var route: Int32
                var direction: Int8
                var stops: [Int32]
            }
            var patternIDs: [PatternKey: Int] = [:]
            var included: Set<Int32> = []
            for (index, trip) in feed.trips.enumerated() where running.contains(trip.service) {
                let range = feed.stopTimes.range(trip: Int32(index))
                guard !range.isEmpty else { continue }
                included.insert(Int32(index))
                let key = PatternKey(route: trip.route, direction: trip.directionID, stops: Array(feed.stopTimes.stop[range]))
                let pattern: Int
                if let known = patternIDs[key] {
                    pattern = known
                } else {
                    pattern = patternIDs.count + 1
                    patternIDs[key] = pattern
                    patterns.append([.integer(pattern), .text(feed.routes[Int(trip.route)].id), .integer(Int(trip.directionID)), .integer(range.count)])
                    for (position, stop) in key.stops.enumerated() {
                        patternStops.append([.integer(pattern), .integer(position), .text(feed.stops[Int(stop)].id)])
                    }
                }
                trips.append([
                    .text(trip.id), .integer(pattern), .text(feed.serviceIDs[Int(trip.service)]), .optional(trip.headsign), .optional(trip.shortName),
                    .integer(Int(trip.wheelchairAccessible)),
                ])
                for (position, row) in range.enumerated() {
                    stopTimes.append([
                        .text(trip.id), .integer(position), .integer(Int(feed.stopTimes.arrival[row])), .integer(Int(feed.stopTimes.departure[row])),
                    ])
                }
            }
            frequencies = feed.frequencies.filter { included.contains($0.trip) }.map { frequency in
                [
                    .text(feed.trips[Int(frequency.trip)].id), .integer(Int(frequency.start)), .integer(Int(frequency.end)), .integer(Int(frequency.headway)),
                    .integer(frequency.exactTimes ? 1 : 0),
                ]
            }
        }
    }
}
