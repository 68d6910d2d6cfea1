import Foundation
import HeraldGTFS
import HeraldStorage
import SQLKit

/// Feeds, their versions, their stored zips and imports.
struct FeedStore: Sendable {
    init() {}

    /// Bytes of one stored chunk of a feed's zip.
    static let chunkBytes = 4 << 20

    // MARK: Feeds

    func feed(_ db: any SQLDatabase, name: String) async throws -> FeedStateRecord? {
        try await db.raw("SELECT * FROM transit_feeds WHERE name = \(bind: name)").first(decoding: FeedStateRecord.self)
    }

    func feeds(_ db: any SQLDatabase) async throws -> [FeedStateRecord] {
        try await db.raw("SELECT * FROM transit_feeds ORDER BY name").all(decoding: FeedStateRecord.self)
    }

    /// Makes sure the feed has a row (configured feeds, first imports).
    func ensure(_ db: any SQLDatabase, name: String, sourceURL: String?, now: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO transit_feeds (name, source_url, next_check_at, updated_at) VALUES (\(bind: name), \(bind: sourceURL), 0, \(bind: now))
            ON CONFLICT (name) DO NOTHING
            """
        ).run()
        if let sourceURL {
            try await db.raw(
                "UPDATE transit_feeds SET source_url = \(bind: sourceURL) WHERE name = \(bind: name) AND (source_url IS NULL OR source_url <> \(bind: sourceURL))"
            ).run()
        }
    }

    /// Takes the feed's import lease for `importID` until `until`, unless another import
    /// holds an unexpired one: false then.
    func leaseImport(_ db: any SQLDatabase, name: String, importID: String, now: Int64, until: Int64) async throws -> Bool {
        let row = try await db.raw(
            """
            UPDATE transit_feeds SET import_lease_until = \(bind: until), import_id = \(bind: importID), updated_at = \(bind: now)
            WHERE name = \(bind: name) AND (import_lease_until IS NULL OR import_lease_until < \(bind: now) OR import_id = \(bind: importID))
            RETURNING name
            """
        ).first()
        return row != nil
    }

    func releaseImport(_ db: any SQLDatabase, name: String, importID: String) async throws {
        try await db.raw("UPDATE transit_feeds SET import_lease_until = NULL, import_id = NULL WHERE name = \(bind: name) AND import_id = \(bind: importID)")
            .run()
    }

    /// Claims the feed's scheduled check if it is due: exactly one node gets true.
    func claimCheck(_ db: any SQLDatabase, name: String, now: Int64, next: Int64) async throws -> Bool {
        let row = try await db.raw(
            """
            UPDATE transit_feeds SET next_check_at = \(bind: next), checked_at = \(bind: now), updated_at = \(bind: now)
            WHERE name = \(bind: name) AND next_check_at <= \(bind: now)
            RETURNING name
            """
        ).first()
        return row != nil
    }

    /// Moves the next check (a failed fetch is tried again sooner than the refresh interval).
    func reschedule(_ db: any SQLDatabase, name: String, at: Int64) async throws {
        try await db.raw("UPDATE transit_feeds SET next_check_at = \(bind: at) WHERE name = \(bind: name) AND next_check_at > \(bind: at)").run()
    }

    func recordCheck(_ db: any SQLDatabase, name: String, etag: String?, lastModified: String?, error: String?, now: Int64) async throws {
        try await db.raw(
            """
            UPDATE transit_feeds SET etag = COALESCE(\(bind: etag), etag), last_modified = COALESCE(\(bind: lastModified), last_modified),
                last_error = \(bind: error), updated_at = \(bind: now)
            WHERE name = \(bind: name)
            """
        ).run()
    }

    // MARK: Versions

    func version(_ db: any SQLDatabase, id: String) async throws -> FeedVersionRecord? {
        try await db.raw("SELECT * FROM transit_feed_versions WHERE id = \(bind: id)").first(decoding: FeedVersionRecord.self)
    }

    func insert(_ db: any SQLDatabase, _ v: FeedVersionRecord) async throws {
        try await db.raw(
            """
            INSERT INTO transit_feed_versions (id, feed_name, version, sha256, size_bytes, status, source, row_count, stop_time_count, report,
                imported_at, activated_at)
            VALUES (\(bind: v.id), \(bind: v.feedName), \(bind: v.version), \(bind: v.sha256), \(bind: v.sizeBytes), \(bind: v.status.rawValue),
                \(bind: v.source), \(bind: v.rowCount), \(bind: v.stopTimeCount), \(bind: v.report), \(bind: v.importedAt), \(bind: v.activatedAt))
            """
        ).run()
    }

    /// Makes `versionID` the feed's serving version in one statement each (inside the
    /// caller's transaction): the old one is retired. Returns the version it replaced.
    func activate(_ db: any SQLDatabase, feed: String, versionID: String, now: Int64) async throws -> String? {
        let previous = try await self.feed(db, name: feed)?.activeVersion
        try await db.raw("UPDATE transit_feed_versions SET status = 'ready', activated_at = \(bind: now) WHERE id = \(bind: versionID)").run()
        try await db.raw("UPDATE transit_feeds SET active_version = \(bind: versionID), updated_at = \(bind: now) WHERE name = \(bind: feed)").run()
        if let previous, previous != versionID {
            try await db.raw("UPDATE transit_feed_versions SET status = 'retired' WHERE id = \(bind: previous)").run()
        }
        return previous
    }

    /// Versions whose rows can go: retired ones, and loads abandoned before `staleBefore`
    /// (a node died while writing).
    func deletable(_ db: any SQLDatabase, staleBefore: Int64) async throws -> [String] {
        try await db.raw(
            """
            SELECT id FROM transit_feed_versions
            WHERE status = 'retired' OR (status = 'loading' AND imported_at < \(bind: staleBefore))
            """
        ).all().map { try $0.decode(column: "id", as: String.self) }
    }

    /// Tables holding a version's rows.
    static let versionTables = [
        "transit_stop_times", "transit_shapes", "transit_trips", "transit_stops", "transit_routes", "transit_agencies", "transit_calendar",
        "transit_calendar_dates", "transit_frequencies", "transit_transfers", "transit_fare_attributes", "transit_fare_rules",
        "transit_rider_categories", "transit_fare_media", "transit_fare_products", "transit_areas", "transit_stop_areas", "transit_networks",
        "transit_route_networks", "transit_timeframes", "transit_fare_leg_rules", "transit_fare_leg_join_rules", "transit_fare_transfer_rules",
    ]

    /// Deletes a version's rows and zip (its `transit_feed_versions` row stays as history).
    func deleteRows(_ database: any Database, versionID: String) async throws {
        for table in Self.versionTables + ["transit_feed_files", "transit_offline_files"] {
            try await database.withConnection { db in
                var query = SQLQueryString("DELETE FROM ")
                query.appendInterpolation(unsafeRaw: table)
                query.appendInterpolation(unsafeRaw: " WHERE version_id = ")
                query.appendInterpolation(bind: versionID)
                try await db.raw(query).run()
            }
        }
        try await database.withConnection { db in
            try await db.raw("UPDATE transit_feed_versions SET status = 'retired' WHERE id = \(bind: versionID) AND status = 'loading'").run()
        }
    }

    // MARK: Files

    /// Stores a version's offline database (in chunks, as the zip) and records its size and
    /// sha256 on the version.
    func writeOfflineFile(_ database: any Database, versionID: String, bytes: Data, sha256: String) async throws {
        try await writeChunks(database, table: "transit_offline_files", versionID: versionID, bytes: bytes)
        try await database.withConnection { db in
            try await db.raw(
                "UPDATE transit_feed_versions SET offline_size_bytes = \(bind: Int64(bytes.count)), offline_sha256 = \(bind: sha256) WHERE id = \(bind: versionID)"
            ).run()
        }
    }

    func readOfflineFile(_ database: any Database, versionID: String) async throws -> Data? {
        try await readChunks(database, table: "transit_offline_files", versionID: versionID)
    }

    func writeFile(_ database: any Database, versionID: String, zip: Data) async throws {
        try await writeChunks(database, table: "transit_feed_files", versionID: versionID, bytes: zip)
    }

    func readFile(_ database: any Database, versionID: String) async throws -> Data? {
        try await readChunks(database, table: "transit_feed_files", versionID: versionID)
    }

    private func writeChunks(_ database: any Database, table: String, versionID: String, bytes zip: Data) async throws {
        var chunk = 0
        var offset = 0
        repeat {
            let end = min(zip.count, offset + Self.chunkBytes)
            let bytes = Data(zip[zip.startIndex + offset..<zip.startIndex + end])
            let index = chunk
            try await database.withConnection { db in
                var query = SQLQueryString("INSERT INTO ")
                query.appendInterpolation(unsafeRaw: table)
                query.appendInterpolation(unsafeRaw: " (version_id, chunk, bytes) VALUES (")
                query.appendInterpolation(bind: versionID)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: index)
                query.appendInterpolation(unsafeRaw: ", ")
                query.appendInterpolation(bind: bytes)
                query.appendInterpolation(unsafeRaw: ")")
                try await db.raw(query).run()
            }
            chunk += 1
            offset = end
        } while offset < zip.count
    }

    private func readChunks(_ database: any Database, table: String, versionID: String) async throws -> Data? {
        let count = try await database.withConnection { db in
            var query = SQLQueryString("SELECT COUNT(*) AS n FROM ")
            query.appendInterpolation(unsafeRaw: table)
            query.appendInterpolation(unsafeRaw: " WHERE version_id = ")
            query.appendInterpolation(bind: versionID)
            return try await db.raw(query).first()?.decode(column: "n", as: Int.self) ?? 0
        }
        guard count > 0 else { return nil }
        var data = Data()
        for chunk in 0..<count {
            let bytes = try await database.withConnection { db in
                var query = SQLQueryString("SELECT bytes FROM ")
                query.appendInterpolation(unsafeRaw: table)
                query.appendInterpolation(unsafeRaw: " WHERE version_id = ")
                query.appendInterpolation(bind: versionID)
                query.appendInterpolation(unsafeRaw: " AND chunk = ")
                query.appendInterpolation(bind: chunk)
                return try await db.raw(query).first()?.decode(column: "bytes", as: Data.self)
            }
            guard let bytes else { return nil }
            data.append(contentsOf: bytes)
        }
        return data
    }

    // MARK: Imports

    func insert(_ db: any SQLDatabase, _ i: ImportRecord) async throws {
        try await db.raw(
            """
            INSERT INTO transit_imports (id, feed_name, status, source, version_id, report, error, requested_by, created_at, finished_at)
            VALUES (\(bind: i.id), \(bind: i.feedName), \(bind: i.status.rawValue), \(bind: i.source), \(bind: i.versionID), \(bind: i.report),
                \(bind: i.error), \(bind: i.requestedBy), \(bind: i.createdAt), \(bind: i.finishedAt))
            """
        ).run()
    }

    func finish(_ db: any SQLDatabase, _ i: ImportRecord) async throws {
        try await db.raw(
            """
            UPDATE transit_imports SET status = \(bind: i.status.rawValue), version_id = \(bind: i.versionID), report = \(bind: i.report),
                error = \(bind: i.error), finished_at = \(bind: i.finishedAt)
            WHERE id = \(bind: i.id)
            """
        ).run()
    }

    func importRecord(_ db: any SQLDatabase, id: String) async throws -> ImportRecord? {
        try await db.raw("SELECT * FROM transit_imports WHERE id = \(bind: id)").first(decoding: ImportRecord.self)
    }
}
