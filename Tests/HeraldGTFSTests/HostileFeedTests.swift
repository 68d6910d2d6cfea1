import Foundation
import Testing
import ZIPFoundation

@testable import HeraldGTFS

/// Feeds built to hurt the importer: zip bombs (honest and lying headers), names that
/// leave the feed's folder, a value of many megabytes, a calendar to the year 9999.
@Suite struct HostileFeedTests {
    /// A zip of `files` (name → bytes), deflated.
    static func zip(_ files: [(String, Data)]) throws -> Data {
        let archive = try Archive(accessMode: .create)
        for (name, contents) in files {
            try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(contents.count), compressionMethod: .deflate) { position, size in
                contents.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return try #require(archive.data)
    }

    static func minimal(replacing replaced: [String: String] = [:]) -> [(String, Data)] {
        GTFSTestData.minimalFiles.merging(replaced) { $1 }.sorted { $0.key < $1.key }.map { ($0.key, Data($0.value.utf8)) }
    }

    @Test func aZipBombIsRefusedFromItsHeader() throws {
        // 64 MB of one byte deflates about a thousand times.
        let bomb = try Self.zip(Self.minimal() + [("shapes.txt", Data(repeating: 0x41, count: 64 << 20))])
        #expect(bomb.count < 1 << 20)
        #expect(throws: FeedArchiveError.bomb("shapes.txt")) { try FeedArchive(zip: bomb) }
    }

    /// A header that declares a small size for a file that inflates to 16 MB: inflating stops
    /// at the declared size.
    @Test func aLyingHeaderStopsInflatingAtWhatItDeclared() throws {
        var bytes = [UInt8](try Self.zip([("stop_times.txt", Data(repeating: 0x41, count: 16 << 20))]))
        // Declare 4,096 bytes in the local header (offset 22) and the central directory (24).
        func patch(signature: [UInt8], offset: Int) {
            var index = 0
            while index + 4 <= bytes.count {
                if Array(bytes[index..<index + 4]) == signature {
                    let declared = UInt32(4096)
                    for byte in 0..<4 { bytes[index + offset + byte] = UInt8((declared >> (8 * UInt32(byte))) & 0xFF) }
                }
                index += 1
            }
        }
        patch(signature: [0x50, 0x4B, 0x03, 0x04], offset: 22)
        patch(signature: [0x50, 0x4B, 0x01, 0x02], offset: 24)
        let archive = try FeedArchive(zip: Data(bytes))
        #expect(throws: FeedArchiveError.bomb("stop_times.txt")) { try archive.read("stop_times.txt") }
    }

    @Test func namesThatLeaveTheFeedAreDroppedFromItAndFromTheZipItKeeps() throws {
        let hostile = ["../../../../tmp/x", "/tmp/x", "a/../../b.txt", "..\\evil.txt"]
        let zip = try Self.zip(Self.minimal() + hostile.map { ($0, Data("boom".utf8)) })
        let archive = try FeedArchive(zip: zip)
        #expect(Set(archive.droppedNames) == Set(hostile))
        #expect(archive.fileNames == GTFSTestData.minimalFiles.keys.sorted())
        let kept = try Archive(data: archive.zipBytes, accessMode: .read)
        #expect(kept.map(\.path).sorted() == GTFSTestData.minimalFiles.keys.sorted())
        let (feed, report) = FeedParser.parse(archive, scope: .full)
        #expect(feed != nil)
        #expect(report.notices.contains { $0.code == "unsafe_file_name" })
        #expect(FeedArchive.isSafe("stops.txt") && FeedArchive.isSafe("feed/stops.txt") && FeedArchive.isSafe("./stops.txt"))
    }

    @Test func aValueLongerThanSixteenKibibytesRefusesTheFile() throws {
        let long = String(repeating: "n", count: 17 * 1024)
        let stops = "stop_id,stop_name,stop_lat,stop_lon\nCEN1,\(long),-33.88,151.20\nTH,Town Hall,-33.87,151.20\nWY,Wynyard,-33.86,151.20\n"
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(GTFSTestData.minimalFiles.merging(["stops.txt": stops]) { $1 }), scope: .full)
        #expect(feed == nil)
        #expect(report.notices.contains { $0.code == "field_too_long" })
        // 16 KiB is still a value.
        let fits = stops.replacingOccurrences(of: long, with: String(repeating: "n", count: 16 * 1024))
        #expect(FeedParser.parse(try GTFSTestData.archive(GTFSTestData.minimalFiles.merging(["stops.txt": fits]) { $1 }), scope: .full).0 != nil)
    }

    /// The attack's calendar: 302 services to 9999-12-31. The version keeps ten years from a
    /// year before the import; the index is as large as ten years make it.
    @Test func aCalendarToTheYear9999IsHeldToTheConfiguredSpan() throws {
        var calendar = "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n"
        for index in 0..<302 { calendar += "S\(index),1,1,1,1,1,1,1,20260101,99991231\n" }
        calendar += "WK,1,1,1,1,1,1,1,20260101,20261231\n"
        let (parsed, _) = FeedParser.parse(try GTFSTestData.archive(GTFSTestData.minimalFiles.merging(["calendar.txt": calendar]) { $1 }), scope: .full)
        var feed = try #require(parsed)
        let today = try #require(ServiceDate.days(year: 2026, month: 11, day: 29))
        let bounded = feed.boundServiceDays(maxDays: 3_660, today: today)
        let kept = try #require(bounded)
        #expect(kept.lowerBound == ServiceDate.days(year: 2026, month: 1, day: 1))
        #expect(kept.count == 3_660)
        let timetable = try Timetable(feed: feed)
        #expect(timetable.calendar.days == kept)
        #expect(timetable.calendar.hasService(day: today))
        // A feed within the span is left as it is.
        var small = try #require(FeedParser.parse(try GTFSTestData.archive(GTFSTestData.minimalFiles), scope: .full).0)
        #expect(small.boundServiceDays(maxDays: 3_660, today: today) == nil)
        // A feed long past keeps its own first years, not today's.
        var old = feed
        old.calendars = old.calendars.map { rule in
            var rule = rule
            rule.startDay = ServiceDate.days(year: 2001, month: 1, day: 1)!
            return rule
        }
        let oldBounded = old.boundServiceDays(maxDays: 3_660, today: today)
        let oldKept = try #require(oldBounded)
        #expect(oldKept.lowerBound == today - 366)
    }
}
