import Foundation

/// Several agencies' feeds as one feed: a region (a city's buses, its commuter rail, the next
/// town's lines) planned as one network, with walks between the stops of different feeds.
///
/// Why the files are merged rather than the parsed feeds: everything that reads a feed (the
/// parser and its report, the zip the database keeps and `GET /gtfs/feed` serves) then reads
/// one ordinary GTFS feed, and no model type learns about regions.
///
/// The rules, the way OpenTripPlanner names a region's entities by feed:
/// - every id of feed `name` becomes `name:id` (stops, routes, trips, services, shapes,
///   agencies, fares, areas, levels, …), so two agencies' `1` never collide; empty values
///   stay empty;
/// - an agency without an id (allowed in a one-agency feed) is `name:agency`, and the feed's
///   routes without an `agency_id` point to it;
/// - a file's columns are the union of the feeds' columns, in the order first met;
/// - `feed_info.txt` is the first feed's (GTFS allows one row);
/// - feeds in different time zones are refused: a feed's times are local to one zone.
public enum FeedRegion {
    public enum MergeError: Error, Equatable, Sendable, CustomStringConvertible {
        case noFeeds
        /// A name that is empty, repeated, or holds `:` (the separator) or a space.
        case badName(String)
        /// The feeds' `agency_timezone` values, one per feed, when they differ.
        case timeZones([String])
        case unreadable(String)

        public var description: String {
            switch self {
            case .noFeeds: "a region needs at least one feed"
            case .badName(let name): "feed name '\(name)' cannot name a region's part (empty, repeated, or holding ':' or a space)"
            case .timeZones(let zones): "a region's feeds must share one time zone, these use \(zones.joined(separator: ", "))"
            case .unreadable(let detail): "a feed of the region cannot be read: \(detail)"
            }
        }
    }

    /// Columns that hold an id of some file (GTFS reference, all files): their values are
    /// prefixed. `translations.txt`'s `record_id` names an id of the file its row is about.
    static let idColumns: Set<String> = [
        "agency_id", "stop_id", "parent_station", "zone_id", "level_id", "route_id", "trip_id", "service_id", "shape_id", "block_id",
        "fare_id", "origin_id", "destination_id", "contains_id", "from_stop_id", "to_stop_id", "from_route_id", "to_route_id", "from_trip_id",
        "to_trip_id", "pathway_id", "attribution_id", "record_id", "network_id", "area_id", "from_area_id", "to_area_id", "leg_group_id",
        "from_leg_group_id", "to_leg_group_id", "fare_product_id", "fare_media_id", "rider_category_id", "timeframe_group_id",
        "from_timeframe_group_id", "to_timeframe_group_id", "location_group_id", "location_id", "booking_rule_id",
        "pickup_booking_rule_id", "drop_off_booking_rule_id", "prior_notice_service_id",
    ]

    /// The region's feed: `feeds` (name, archive) merged in the order given.
    public static func merge(_ feeds: [(name: String, archive: FeedArchive)], maxUncompressedBytes: Int = FeedArchive.defaultMaxUncompressedBytes)
        throws(MergeError) -> FeedArchive
    {
        guard !feeds.isEmpty else { throw .noFeeds }
        var names = Set<String>()
        for (name, _) in feeds where name.isEmpty || name.contains(":") || name.contains(" ") || !names.insert(name).inserted {
            throw .badName(name)
        }
        var parts: [Part] = []
        for (name, archive) in feeds { parts.append(try Part(name: name, archive: archive)) }
        let zones = parts.map(\.zone)
        if Set(zones).count > 1 { throw .timeZones(zones) }
        var files: [String] = []
        for part in parts {
            for file in part.archive.fileNames where file.hasSuffix(".txt") && !file.contains("/") && !files.contains(file) { files.append(file) }
        }
        var merged: [String: Data] = [:]
        var total = 0
        for file in files {
            let text = try mergedFile(file, parts)
            total += text.utf8.count
            guard total <= maxUncompressedBytes else { throw .unreadable("the region is larger than \(maxUncompressedBytes) bytes") }
            merged[file] = Data(text.utf8)
        }
        do {
            let zip = try FeedArchive.pack(files.sorted()) { merged[$0] }
            return try FeedArchive(zip: zip, maxUncompressedBytes: maxUncompressedBytes)
        } catch {
            throw .unreadable("\(error)")
        }
    }

    /// One feed of the region: its archive, name, time zone and the id its agency-less rows get.
    struct Part {
        let name: String
        let archive: FeedArchive
        let zone: String
        /// The agency routes without `agency_id` belong to (the feed's only agency).
        let defaultAgency: String

        init(name: String, archive: FeedArchive) throws(MergeError) {
            self.name = name
            self.archive = archive
            guard let agencies = try FeedRegion.file("agency.txt", of: archive, feed: name) else { throw .unreadable("\(name): no agency.txt") }
            var zone: String?
            var firstID: String?
            let zoneColumn = agencies.column("agency_timezone")
            let idColumn = agencies.column("agency_id")
            do {
                _ = try agencies.forEachRecord { record in
                    if zone == nil, let zoneColumn, zoneColumn < record.fieldCount { zone = record.string(zoneColumn) }
                    if firstID == nil { firstID = idColumn.flatMap { $0 < record.fieldCount && !record.isEmpty($0) ? record.string($0) : nil } ?? "" }
                }
            } catch {
                throw .unreadable("\(name)/agency.txt: \(error)")
            }
            guard let zone, !zone.isEmpty else { throw .unreadable("\(name)/agency.txt names no agency_timezone") }
            self.zone = zone
            defaultAgency = name + ":" + ((firstID ?? "").isEmpty ? "agency" : firstID!)
        }

        func prefixed(_ value: String) -> String { value.isEmpty ? value : name + ":" + value }
    }

    static func file(_ name: String, of archive: FeedArchive, feed: String) throws(MergeError) -> CSVFile? {
        do {
            guard let bytes = try archive.read(name) else { return nil }
            return try CSVFile(name: name, bytes: bytes)
        } catch {
            throw .unreadable("\(feed)/\(name): \(error)")
        }
    }

    /// One file of the region as CSV text: the union of the columns, each feed's rows with
    /// their ids prefixed.
    static func mergedFile(_ file: String, _ parts: [Part]) throws(MergeError) -> String {
        var inputs: [(Part, CSVFile)] = []
        for part in parts {
            if let csv = try Self.file(file, of: part.archive, feed: part.name) { inputs.append((part, csv)) }
            // One feed_info row: the first feed's.
            if file == "feed_info.txt" && !inputs.isEmpty { break }
        }
        var columns: [String] = []
        for (_, csv) in inputs {
            for column in csv.columns where !column.isEmpty && !columns.contains(column) { columns.append(column) }
        }
        // Every agency and route gets an agency_id (GTFS requires it with more than one agency).
        if (file == "agency.txt" || file == "routes.txt") && !columns.contains("agency_id") { columns.insert("agency_id", at: 0) }
        var text = columns.map(quoted).joined(separator: ",") + "\n"
        for (part, csv) in inputs {
            let positions = columns.map { csv.column($0) }
            do {
                _ = try csv.forEachRecord { record in
                    var fields: [String] = []
                    fields.reserveCapacity(columns.count)
                    for (column, position) in zip(columns, positions) {
                        var value = position.flatMap { $0 < record.fieldCount ? record.string($0) : nil } ?? ""
                        if column == "agency_id" && value.isEmpty && (file == "agency.txt" || file == "routes.txt") {
                            value = part.defaultAgency
                        } else if idColumns.contains(column) {
                            value = part.prefixed(value)
                        }
                        fields.append(quoted(value))
                    }
                    text += fields.joined(separator: ",")
                    text += "\n"
                }
            } catch {
                throw .unreadable("\(part.name)/\(file): \(error)")
            }
        }
        return text
    }

    /// A CSV field: quoted when it holds a comma, a quote, a line break or spaces at its ends.
    static func quoted(_ value: String) -> String {
        let needsQuotes = value.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" } || value.first == " " || value.last == " "
        return needsQuotes ? "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : value
    }
}
