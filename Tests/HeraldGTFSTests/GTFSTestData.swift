import HeraldGTFS
import HeraldTestFixtures

/// Where the GTFS tests find their feeds: the public sample feed in `Tests/Fixtures`, the real
/// feeds `scripts/transit-data` fetches from PyPI (scripts/test sets HERALD_TEST_TRANSIT_DATA),
/// and feeds written as text (HeraldTestSupport's `TransitFixtures` and `GTFSFixtures`, which
/// the transit tests share).
enum GTFSTestData {
    static func sampleFeedPath() throws -> String { try TransitFixtures.sampleFeedPath() }
    static func realFeedPath(_ name: String) throws -> String { try TransitFixtures.realFeedPath(name) }

    static func parse(_ path: String, scope: FeedParser.Scope = .full) throws -> (TransitFeed?, FeedReport) {
        try GTFSFixtures.parse(path, scope: scope)
    }

    /// A feed from files given as text (name → contents), zipped in memory.
    static func archive(_ files: [String: String]) throws -> FeedArchive { try GTFSFixtures.archive(files) }

    /// A minimal valid feed as files; tests replace or drop files to break it.
    static let minimalFiles: [String: String] = [
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://example.com,Australia/Sydney\n",
        "stops.txt": """
        stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station,platform_code
        CEN,Central Station,-33.8839,151.2072,1,,
        CEN1,Central Platform 1,-33.8840,151.2070,0,CEN,1
        TH,Town Hall,-33.8731,151.2068,0,,
        WY,Wynyard,-33.8661,151.2054,0,,

        """,
        "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type,route_color\nT1,A,T1,North Shore Line,2,F99D1C\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20260101,20261231\n",
        "trips.txt": "route_id,service_id,trip_id,trip_headsign,direction_id\nT1,WK,T1a,Hornsby,0\nT1,WK,T1b,Hornsby,0\n",
        "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence
        T1a,08:00:00,08:00:00,CEN1,1
        T1a,08:04:00,08:05:00,TH,2
        T1a,08:09:00,08:09:00,WY,3
        T1b,25:10:00,25:10:00,CEN1,1
        T1b,,,TH,2
        T1b,25:20:00,25:20:00,WY,3

        """,
    ]
}
