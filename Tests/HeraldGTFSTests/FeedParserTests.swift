import Foundation
import Testing

@testable import HeraldGTFS

@Suite struct FeedParserTests {
    @Test func readsTheSampleFeed() throws {
        let (feed, report) = try GTFSTestData.parse(try GTFSTestData.sampleFeedPath())
        let sample = try #require(feed, "\(report.sorted)")
        #expect(!report.hasErrors)
        #expect(sample.agencies.map(\.timezone) == ["America/Los_Angeles"])
        #expect(sample.stops.count == 9)
        #expect(sample.routes.count == 5)
        #expect(sample.trips.count == 11)
        #expect(sample.stopTimes.count == 28)
        #expect(sample.frequencies.count == 11)
        #expect(sample.serviceIDs.sorted() == ["FULLW", "WE"])
        #expect(
            sample.calendarExceptions == [
                CalendarException(
                    service: sample.serviceIDs.firstIndex(of: "FULLW").map(Int32.init)!, day: ServiceDate.days(year: 2007, month: 6, day: 4)!, added: false)
            ])
        #expect(sample.fareAttributes.map(\.id) == ["p", "a"])
        #expect(sample.fareRules.count == 4)
        // Trip order and stop order: CITY1 visits STAGECOACH, NANAA, NADAV, DADAN, EMSI.
        let city1 = try #require(sample.trips.firstIndex { $0.id == "CITY1" })
        let stops = sample.stopTimes.range(trip: Int32(city1)).map { sample.stops[Int(sample.stopTimes.stop[$0])].id }
        #expect(stops == ["STAGECOACH", "NANAA", "NADAV", "DADAN", "EMSI"])
        #expect(sample.stopTimes.range(trip: Int32(city1)).map { sample.stopTimes.departure[$0] } == [21_600, 22_020, 22_440, 22_860, 23_280])
        #expect(sample.trips[city1].directionID == 0)
        #expect(sample.trips.first { $0.id == "STBA" }?.directionID == -1)
        // The empty shapes.txt has only its header: no shapes, no error.
        #expect(sample.shapes.isEmpty)
    }

    @Test func readsAFolderAndItsZipTheSame() throws {
        let folder = try GTFSTestData.sampleFeedPath()
        let packed = try FeedArchive(folder: folder)
        let again = try FeedArchive(zip: packed.zipBytes)
        #expect(FeedParser.parse(packed).feed == FeedParser.parse(again).feed)
        // Packing is deterministic: the same folder gives the same bytes (and hash).
        #expect(try FeedArchive(folder: folder).zipBytes == packed.zipBytes)
    }

    @Test func interpolatesTimesLeftEmpty() throws {
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(GTFSTestData.minimalFiles))
        let parsed = try #require(feed, "\(report.sorted)")
        let trip = try #require(parsed.trips.firstIndex { $0.id == "T1b" })
        let range = parsed.stopTimes.range(trip: Int32(trip))
        let middle = range.lowerBound + 1
        // Town Hall lies between Central and Wynyard: its time is in proportion to the distance.
        let time = parsed.stopTimes.departure[middle]
        #expect(time > 25 * 3600 + 10 * 60 && time < 25 * 3600 + 20 * 60)
        #expect(parsed.stopTimes.given[middle] & 3 == 0)
        #expect(parsed.stopTimes.given[range.lowerBound] & 3 == 3)
        // Platforms know their station.
        let platform = try #require(parsed.stops.firstIndex { $0.id == "CEN1" })
        #expect(parsed.stops[parsed.stops[platform].parent < 0 ? 0 : Int(parsed.stops[platform].parent)].id == "CEN")
        #expect(parsed.stops[platform].platformCode == "1")
        #expect(parsed.routes[0].color == "F99D1C")
    }

    /// Parses the minimal feed with `changes` applied (nil removes a file).
    func report(_ changes: [String: String?]) throws -> FeedReport {
        var files = GTFSTestData.minimalFiles
        for (name, contents) in changes { files[name] = contents }
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(files))
        #expect((feed == nil) == report.hasErrors)
        return report
    }

    func sample(_ report: FeedReport, _ code: String) -> FeedReport.Sample? {
        report.notices.first { $0.code == code }?.samples.first
    }

    @Test func aMissingRequiredFileIsFatal() throws {
        let report = try report(["stops.txt": nil])
        #expect(report.hasErrors)
        #expect(sample(report, "missing_required_file")?.file == "stops.txt")
        let noCalendar = try self.report(["calendar.txt": nil])
        #expect(noCalendar.count("missing_calendar_and_calendar_date_files") == 1)
    }

    @Test func aMissingRequiredColumnIsFatal() throws {
        let report = try report(["stops.txt": "stop_name,stop_lat,stop_lon\nX,1,2\n"])
        let found = try #require(sample(report, "missing_required_column"))
        #expect(found.file == "stops.txt")
        #expect(found.field == "stop_id")
        #expect(found.line == 1)
    }

    @Test func aRowThatDoesNotParseNamesFileLineColumnAndValue() throws {
        var stopTimes = GTFSTestData.minimalFiles["stop_times.txt"]!
        stopTimes = stopTimes.replacingOccurrences(of: "T1a,08:04:00,08:05:00", with: "T1a,08:04:00,8h05")
        let report = try report(["stop_times.txt": stopTimes])
        let found = try #require(sample(report, "invalid_time"))
        #expect(found.file == "stop_times.txt")
        #expect(found.line == 3)
        #expect(found.field == "departure_time")
        #expect(found.value == "8h05")
        let badLatitude = try self.report(["stops.txt": "stop_id,stop_name,stop_lat,stop_lon\nCEN1,C,-95.5,151\nTH,T,1,2\nWY,W,1,2\n"])
        #expect(sample(badLatitude, "number_out_of_range")?.field == "stop_lat")
        let shortRow = try self.report(["routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type\nT1,A,T1,North Shore Line\n"])
        #expect(sample(shortRow, "invalid_row_length")?.line == 2)
    }

    @Test func aDanglingReferenceIsFatal() throws {
        var stopTimes = GTFSTestData.minimalFiles["stop_times.txt"]!
        stopTimes = stopTimes.replacingOccurrences(of: "T1a,08:09:00,08:09:00,WY,3", with: "T1a,08:09:00,08:09:00,NOWHERE,3")
        let report = try report(["stop_times.txt": stopTimes])
        let found = try #require(sample(report, "foreign_key_violation"))
        #expect(found.file == "stop_times.txt")
        #expect(found.field == "stop_id")
        #expect(found.value == "NOWHERE")
        #expect(found.line == 4)
        let trips = try self.report(["trips.txt": "route_id,service_id,trip_id\nT9,WK,T1a\nT1,WK,T1b\n"])
        #expect(sample(trips, "foreign_key_violation")?.value == "T9")
    }

    @Test func aDuplicateIDIsFatal() throws {
        let report = try report(["routes.txt": "route_id,route_short_name,route_type\nT1,T1,2\nT1,T1 again,2\n"])
        let found = try #require(sample(report, "duplicate_key"))
        #expect(found.file == "routes.txt")
        #expect(found.line == 3)
        #expect(found.value == "T1")
        var stopTimes = GTFSTestData.minimalFiles["stop_times.txt"]!
        stopTimes += "T1a,08:10:00,08:10:00,WY,3\n"
        #expect(sample(try self.report(["stop_times.txt": stopTimes]), "duplicate_key")?.field == "trip_id, stop_sequence")
    }

    @Test func timesThatRunBackwardsAreFatal() throws {
        var stopTimes = GTFSTestData.minimalFiles["stop_times.txt"]!
        stopTimes = stopTimes.replacingOccurrences(of: "T1a,08:09:00,08:09:00", with: "T1a,08:01:00,08:01:00")
        #expect(try report(["stop_times.txt": stopTimes]).count("stop_time_with_arrival_before_previous_departure_time") == 1)
        var edge = GTFSTestData.minimalFiles["stop_times.txt"]!
        edge = edge.replacingOccurrences(of: "T1b,25:20:00,25:20:00", with: "T1b,,")
        #expect(try report(["stop_times.txt": edge]).count("missing_trip_edge") == 1)
    }

    @Test func warningsDoNotRefuseTheFeed() throws {
        let report = try report([
            "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type,route_color,extra\nT1,A,T1,North Shore Line,2,F99D1C,x\n\n\n",
            "notes.txt": "hello\n",
        ])
        #expect(!report.hasErrors)
        #expect(report.count("unknown_column") == 1)
        #expect(report.count("unknown_file") == 1)
        // Two blank lines, one notice that counts them.
        #expect(report.count("empty_row") == 2)
        #expect(report.notices.first { $0.code == "empty_row" }?.samples.first?.line == 3)
        #expect(report.sorted.first?.severity == .warning)
    }

    @Test func stationRulesAreChecked() throws {
        let report = try report([
            "stops.txt": """
            stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station
            CEN,Central Station,-33.8839,151.2072,1,TH
            CEN1,Central Platform 1,-33.8840,151.2070,0,CEN
            TH,Town Hall,-33.8731,151.2068,0,
            WY,Wynyard,-33.8661,151.2054,0,TH
            """
        ])
        #expect(report.count("station_with_parent_station") == 1)
        #expect(report.count("wrong_parent_location_type") == 1)
    }
}
