import Foundation

/// The feed the transit fuzz targets run against: two timetabled trips and a frequency trip
/// over three stops in Sydney, every day of 2026.
enum FuzzTimetable {
    static let timetable: Timetable = {
        let files: [String: String] = [
            "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://example.com,Australia/Sydney\n",
            "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\nCEN1,Central,-33.8840,151.2070\nTH,Town Hall,-33.8731,151.2068\nWY,Wynyard,-33.8661,151.2054\n",
            "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type\nT1,A,T1,North Shore,2\n",
            "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20260101,20261231\n",
            "trips.txt": "route_id,service_id,trip_id,direction_id\nT1,WK,T1a,0\nT1,WK,T1b,0\nT1,WK,F1,0\n",
            "stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1a,08:00:00,08:00:00,CEN1,1\nT1a,08:04:00,08:05:00,TH,2\nT1a,08:09:00,08:09:00,WY,3\nT1b,25:10:00,25:10:00,TH,1\nT1b,25:20:00,25:20:00,WY,2\nF1,06:00:00,06:00:00,CEN1,1\nF1,06:10:00,06:10:00,WY,2\n",
            "frequencies.txt": "trip_id,start_time,end_time,headway_secs\nF1,06:00:00,22:00:00,600\n",
        ]
        let folder = NSTemporaryDirectory() + "herald-fuzz-feed-\(getpid())"
        try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, contents) in files { try! contents.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
        return try! Timetable(feed: FeedParser.parse(try! FeedArchive(folder: folder), scope: .serving).0!)
    }()
}
