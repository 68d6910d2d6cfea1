#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif
/// Reads a feed's files into a `TransitFeed`, checking them as the canonical GTFS
/// validator does (see `FeedReport` for which findings refuse a feed).
///
/// Files are read in dependency order (agencies, stops, routes, calendars, trips, stop
/// times, then the rest), so each reference is checked against files already read.
public enum FeedParser {
    /// `full` reads and checks every supported file (an import); `serving` reads only what
    /// the timetable needs, from a feed that was checked when it was imported (a start).
    public enum Scope: Sendable {
        case full
        case serving
    }

    /// The feed, or nil when the report has errors.
    public static func parse(_ archive: FeedArchive, scope: Scope = .full) -> (feed: TransitFeed?, report: FeedReport) {
        let parse = FeedParse(archive: archive, scope: scope)
        parse.run()
        return (parse.report.hasErrors ? nil : parse.feed, parse.report)
    }

    /// Files Herald reads; others are reported as `unknown_file` (info) unless the GTFS
    /// reference defines them (then they are kept in the stored zip and not read).
    static let readFiles: Set<String> = [
        "agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt", "calendar.txt", "calendar_dates.txt",
        "frequencies.txt", "transfers.txt", "shapes.txt", "fare_attributes.txt", "fare_rules.txt", "feed_info.txt",
        // GTFS Fares v2.
        "timeframes.txt", "rider_categories.txt", "fare_media.txt", "fare_products.txt", "fare_leg_rules.txt", "fare_leg_join_rules.txt",
        "fare_transfer_rules.txt", "areas.txt", "stop_areas.txt", "networks.txt", "route_networks.txt",
    ]
    static let otherSpecFiles: Set<String> = [
        "pathways.txt", "levels.txt", "location_groups.txt", "location_group_stops.txt", "locations.geojson", "booking_rules.txt", "translations.txt",
        "attributions.txt",
    ]
}

/// One parse of one feed: the feed being built, the report, and the id lookups the files
/// after need.
final class FeedParse {
    let archive: FeedArchive
    let scope: FeedParser.Scope
    var feed = TransitFeed()
    var report = FeedReport()
    var stopIndex: [String: Int32] = [:]
    var routeIndex: [String: Int32] = [:]
    var tripIndex: [String: Int32] = [:]
    var serviceIndex: [String: Int32] = [:]
    var agencyIDs: Set<String> = []
    var zoneIDs: Set<String> = []
    var shapeIDs: Set<String> = []
    var fareIDs: Set<String> = []

    init(archive: FeedArchive, scope: FeedParser.Scope) {
        self.archive = archive
        self.scope = scope
    }

    var checking: Bool { scope == .full }

    func run() {
        if checking {
            if !archive.droppedNames.isEmpty {
                report.add(
                    "unsafe_file_name", .warning, count: archive.droppedNames.count,
                    .init(
                        message:
                            "files whose names leave the feed's folder were dropped: \(archive.droppedNames.prefix(3).map { String($0.prefix(100)) }.joined(separator: ", "))"
                    ))
            }
            if let folder = archive.subfolder {
                report.info(
                    "invalid_input_files_in_subfolder", .init(message: "the feed's files are inside the folder \(folder) of the zip; they were read from there")
                )
            }
            for name in archive.fileNames where !FeedParser.readFiles.contains(name) && !FeedParser.otherSpecFiles.contains(name) {
                report.info("unknown_file", .init(file: name, message: "not a GTFS file; kept in the stored feed, not read"))
            }
        }
        readAgencies()
        readStops()
        readRoutes()
        let hasCalendar = archive.contains("calendar.txt")
        let hasCalendarDates = archive.contains("calendar_dates.txt")
        if !hasCalendar && !hasCalendarDates {
            report.error("missing_calendar_and_calendar_date_files", .init(message: "a feed needs calendar.txt or calendar_dates.txt"))
        }
        readCalendar()
        readCalendarDates()
        readTrips()
        readStopTimes()
        readFrequencies()
        readTransfers()
        // Fares are served (the journey planner prices itineraries); shapes only checked.
        readFares()
        readFaresV2()
        if checking { readShapes() }
        readFeedInfo()
    }

    // MARK: Reading a file

    /// A file's header with named columns; reports missing required columns (then the file
    /// is not read), duplicate and unknown ones. nil when the file is absent (and reported
    /// missing if required) or cannot be read.
    func open(_ name: String, required: Bool, columns known: [String], requiredColumns: [String]) -> ColumnMap? {
        let bytes: [UInt8]?
        do {
            bytes = try archive.read(name)
        } catch {
            report.error("csv_parsing_failed", .init(file: name, message: "the file could not be read from the zip: \(error)"))
            return nil
        }
        guard let bytes else {
            if required { report.error("missing_required_file", .init(file: name, message: "\(name) is required")) }
            return nil
        }
        let file: CSVFile
        do {
            file = try CSVFile(name: name, bytes: bytes)
        } catch {
            report.error("empty_file", .init(file: name, message: "the file has no header row"))
            return nil
        }
        var map = ColumnMap(file: file)
        var seen: Set<String> = []
        for (index, column) in file.columns.enumerated() {
            if column.isEmpty {
                if checking { report.error("empty_column_name", .init(file: name, line: 1, field: "column \(index + 1)", message: "a column has no name")) }
                continue
            }
            if !seen.insert(column).inserted {
                report.error("duplicated_column", .init(file: name, line: 1, field: column, message: "the column appears twice"))
                continue
            }
            if known.contains(column) {
                map.add(column, index)
            } else if checking {
                report.info("unknown_column", .init(file: name, line: 1, field: column, message: "not a column of \(name); ignored"))
            }
        }
        var missing = false
        for column in requiredColumns where map[column] == nil {
            report.error("missing_required_column", .init(file: name, line: 1, field: column, message: "\(name) needs the column \(column)"))
            missing = true
        }
        return missing ? nil : map
    }

    /// Runs `body` for each record, then reports blank lines and padded values once per file.
    func records(_ map: ColumnMap, _ body: (borrowing CSVRecord) -> Void) {
        let name = map.file.name
        let width = map.file.columns.count
        do {
            let summary = try map.file.forEachRecord { record in
                if record.fieldCount != width {
                    report.error(
                        "invalid_row_length",
                        .init(file: name, line: record.line, message: "the row has \(record.fieldCount) values; the header has \(width)"))
                    return
                }
                body(record)
            }
            if checking && summary.blankLines > 0 {
                report.add(
                    "empty_row", .warning, count: summary.blankLines, .init(file: name, line: summary.firstBlankLine, message: "blank lines are skipped"))
            }
            if checking && summary.trimmedValues > 0 {
                report.add(
                    "leading_or_trailing_whitespaces", .warning, count: summary.trimmedValues,
                    .init(file: name, line: summary.firstTrimmedLine, message: "\(summary.trimmedValues) values have spaces around them; they were trimmed"))
            }
        } catch let error as CSVError {
            switch error {
            case .unterminatedQuote(_, let line):
                report.error("csv_parsing_failed", .init(file: name, line: line, message: "a quoted value is not closed"))
            case .textAfterQuote(_, let line):
                report.error("csv_parsing_failed", .init(file: name, line: line, message: "text follows a closing quote"))
            case .fieldTooLong(_, let line, let limit):
                report.error("field_too_long", .init(file: name, line: line, message: "a value is longer than \(limit) bytes"))
            case .emptyFile, .unreadableHeader:
                report.error("csv_parsing_failed", .init(file: name, message: "the file could not be read"))
            }
        } catch {
            report.error("csv_parsing_failed", .init(file: name, message: "the file could not be read"))
        }
    }
}

/// A file's known columns by name.
/// The known columns a file has, by name. Looked up for every field of every row (2.6 M
/// times for Halifax's stop_times.txt), so the names are kept as bytes in one buffer and
/// compared by length and bytes: a dictionary hashed every name and `String ==` took the
/// slow comparison path (each a quarter to a third of the load's time in `perf`).
struct ColumnMap {
    let file: CSVFile
    private var bytes: [UInt8] = []
    /// Per column: where its name starts in `bytes`, its length and its position in the row.
    private var entries: [(start: Int, length: Int, position: Int)] = []

    init(file: CSVFile) {
        self.file = file
    }

    mutating func add(_ column: String, _ index: Int) {
        entries.append((bytes.count, column.utf8.count, index))
        bytes.append(contentsOf: column.utf8)
    }

    subscript(_ column: String) -> Int? {
        var name = column
        return name.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { all in
                for entry in entries where entry.length == wanted.count {
                    if memcmp(all.baseAddress! + entry.start, wanted.baseAddress!, entry.length) == 0 { return entry.position }
                }
                return nil
            }
        }
    }
}
