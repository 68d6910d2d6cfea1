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
            var meta = BulkRows(table: "meta", columns: ["key", "value"])
            for (key, value) in [
                ("schema_version", String(schemaVersion)), ("feed", feedName), ("version", version), ("version_id", versionID),
                ("timezone", timetable.zone.identifier), ("generated_at", timetable.zone.iso8601(generatedAt / 1000)),
                ("service_start_date", ServiceDate.iso(covered.lowerBound)), ("service_end_date", ServiceDate.iso(covered.upperBound)),
            ] {
                meta.append(.text(key), .text(value))
            }
            let tables = [meta] + Rows(timetable, covered: covered).tables
            try await file.transaction { db in
                for statement in schema { try await db.raw(SQLQueryString(statement)).run() }
                for rows in tables { try await db.insertRows(rows) }
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

    /// The rows, worked out from the timetable: only trips running on a covered day, and
    /// only the patterns, stop times and frequencies of those trips.
    struct Rows {
        var agencies = BulkRows(table: "agencies", columns: ["agency_id", "name", "url", "timezone", "phone"])
        var stops = BulkRows(
            table: "stops", columns: ["stop_id", "code", "name", "lat", "lon", "location_type", "parent_station", "platform_code", "wheelchair_boarding"])
        var routes = BulkRows(table: "routes", columns: ["route_id", "agency_id", "short_name", "long_name", "type", "color", "text_color", "sort_order"])
        var patterns = BulkRows(table: "patterns", columns: ["pattern_id", "route_id", "direction_id", "stop_count"])
        var patternStops = BulkRows(table: "pattern_stops", columns: ["pattern_id", "position", "stop_id"])
        var trips = BulkRows(table: "trips", columns: ["trip_id", "pattern_id", "service_id", "headsign", "short_name", "wheelchair_accessible"])
        var stopTimes = BulkRows(table: "stop_times", columns: ["trip_id", "position", "arrival", "departure"])
        var frequencies = BulkRows(table: "frequencies", columns: ["trip_id", "start_time", "end_time", "headway_secs", "exact_times"])
        var serviceDates = BulkRows(table: "service_dates", columns: ["date", "service_id"])

        var tables: [BulkRows] { [agencies, stops, routes, patterns, patternStops, trips, stopTimes, frequencies, serviceDates] }

        init(_ t: Timetable, covered: ClosedRange<Int32>) {
            let feed = t.feed
            for agency in feed.agencies {
                agencies.append(.text(agency.id), .text(agency.name), .text(agency.url), .text(agency.timezone), .text(agency.phone))
            }
            for stop in feed.stops {
                stops.append(
                    .text(stop.id), .text(stop.code), .text(stop.name), .double(stop.latitude), .double(stop.longitude),
                    .integer(Int(stop.locationType.rawValue)), .text(stop.parent >= 0 ? feed.stops[Int(stop.parent)].id : nil), .text(stop.platformCode),
                    .integer(Int(stop.wheelchairBoarding)))
            }
            for route in feed.routes {
                routes.append(
                    .text(route.id), .text(route.agencyID), .text(route.shortName), .text(route.longName), .integer(route.type), .text(route.color),
                    .text(route.textColor), .integer(route.sortOrder))
            }
            var running: Set<Int32> = []
            for day in covered {
                for service in feed.serviceIDs.indices.sorted(by: { feed.serviceIDs[$0] < feed.serviceIDs[$1] })
                where t.calendar.isActive(service: Int32(service), day: day) {
                    running.insert(Int32(service))
                    serviceDates.append(.text(ServiceDate.iso(day)), .text(feed.serviceIDs[service]))
                }
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
                    patterns.append(.integer(pattern), .text(feed.routes[Int(trip.route)].id), .integer(Int(trip.directionID)), .integer(range.count))
                    for (position, stop) in key.stops.enumerated() {
                        patternStops.append(.integer(pattern), .integer(position), .text(feed.stops[Int(stop)].id))
                    }
                }
                trips.append(
                    .text(trip.id), .integer(pattern), .text(feed.serviceIDs[Int(trip.service)]), .text(trip.headsign), .text(trip.shortName),
                    .integer(Int(trip.wheelchairAccessible)))
                for (position, row) in range.enumerated() {
                    stopTimes.append(
                        .text(trip.id), .integer(position), .integer(Int(feed.stopTimes.arrival[row])), .integer(Int(feed.stopTimes.departure[row])))
                }
            }
            for frequency in feed.frequencies where included.contains(frequency.trip) {
                frequencies.append(
                    .text(feed.trips[Int(frequency.trip)].id), .integer(Int(frequency.start)), .integer(Int(frequency.end)), .integer(Int(frequency.headway)),
                    .integer(frequency.exactTimes ? 1 : 0))
            }
        }
    }
}
