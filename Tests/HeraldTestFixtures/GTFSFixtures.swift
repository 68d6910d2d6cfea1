import Foundation
import HeraldCore
import HeraldGTFS
import Synchronization

/// Feeds and timetables for the tests of HeraldGTFS and of HeraldTransit: a feed read from
/// a path or written as text in a test, timetables built once per test process, and the small
/// network the alert tests of both modules work on.
public enum GTFSFixtures {
    public static func parse(_ path: String, scope: FeedParser.Scope = .full) throws -> (TransitFeed?, FeedReport) {
        let archive = try FeedArchive(path: path)
        return FeedParser.parse(archive, scope: scope)
    }

    /// A feed from files given as text (name → contents), zipped in memory.
    public static func archive(_ files: [String: String]) throws -> FeedArchive {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, contents) in files {
            try contents.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        return try FeedArchive(folder: folder)
    }

    /// Timetables by path, built once per test process (Halifax takes seconds in a debug build).
    /// A test asking for a feed being built awaits the same task; the build runs on a
    /// Dispatch thread, so it never holds the cooperative pool the other tests need.
    static let cache = Mutex<[String: Task<Timetable, any Error>]>([:])

    public static func timetable(_ path: String) async throws -> Timetable {
        let task = cache.withLock { cache in
            if let task = cache[path] { return task }
            let task = Task { try await BlockingWork.run { try build(path) } }
            cache[path] = task
            return task
        }
        return try await task.value
    }

    static func build(_ path: String) throws -> Timetable {
        let (feed, report) = try parse(path)
        guard let feed else { throw TransitFixtures.Missing(description: "\(path) did not parse: \(report.sorted.prefix(3))") }
        return try Timetable(feed: feed)
    }

    /// Epoch seconds of a wall time in the timetable's zone.
    public static func local(_ t: Timetable, _ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int, _ s: Int = 0) -> Int64 {
        t.zone.instant(localSeconds: Int64(ServiceDate.days(year: y, month: m, day: d)!) * 86_400 + Int64(h * 3600 + min * 60 + s))
    }

    /// A small network for the alert tests, its answers worked out by hand:
    /// station CEN with platforms CEN1 and CEN2; T1 runs CEN1 → TH → WY (direction 0) and back
    /// (direction 1); T2 runs CEN2 → NS (direction 0 only); bus B1 runs TH → NS.
    public static let alertNetworkFiles: [String: String] = [
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://example.com,Australia/Sydney\n",
        "stops.txt": """
        stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station
        CEN,Central,-33.8839,151.2072,1,
        CEN1,Central Platform 1,-33.8840,151.2070,0,CEN
        CEN2,Central Platform 2,-33.8841,151.2071,0,CEN
        TH,Town Hall,-33.8731,151.2068,0,
        WY,Wynyard,-33.8661,151.2054,0,
        NS,North Sydney,-33.8400,151.2070,0,

        """,
        "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type\nT1,A,T1,North Shore,2\nT2,A,T2,Inner West,2\nB1,A,B1,Harbour Bus,3\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20260101,20261231\n",
        "trips.txt": "route_id,service_id,trip_id,direction_id\nT1,WK,T1a,0\nT1,WK,T1b,1\nT2,WK,T2a,0\nB1,WK,B1a,0\n",
        "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence
        T1a,08:00:00,08:00:00,CEN1,1
        T1a,08:04:00,08:04:00,TH,2
        T1a,08:08:00,08:08:00,WY,3
        T1b,09:00:00,09:00:00,WY,1
        T1b,09:04:00,09:04:00,TH,2
        T1b,09:08:00,09:08:00,CEN1,3
        T2a,08:10:00,08:10:00,CEN2,1
        T2a,08:20:00,08:20:00,NS,2
        B1a,08:30:00,08:30:00,TH,1
        B1a,08:45:00,08:45:00,NS,2

        """,
    ]

    /// The timetable of `alertNetworkFiles` (parsed afresh each call: it is tiny).
    public static func alertNetwork() throws -> Timetable {
        let (feed, report) = FeedParser.parse(try archive(alertNetworkFiles), scope: .serving)
        guard let feed else { throw TransitFixtures.Missing(description: "the network did not parse: \(report.sorted.prefix(3))") }
        return try Timetable(feed: feed)
    }
}
