import Crypto
import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage
import Logging
import Synchronization

/// Loads a GTFS feed into the database as a new version and makes it the one that serves.
///
/// The steps: fetch or read the zip; if it is byte for byte the version already serving,
/// stop (`unchanged`: nothing is written); parse and check every file (errors refuse the
/// feed, and the old version keeps serving); build the timetable (the zone must be known);
/// write the zip and every row under a new version id that nothing reads yet; then, in one
/// transaction, point the feed at it. A node that dies half-way leaves a `loading` version
/// that nothing reads and the next import deletes. One import per feed runs at a time,
/// across nodes (a lease on the feed's row).
public struct FeedImporter: Sendable {
    public enum Source: Sendable, Equatable {
        /// A `.zip` file or a folder of feed files on this machine.
        case path(String)
        case url(String)
        /// A zip already in memory (an upload; a fetch that already ran).
        case zip(Data, description: String)
        /// Several agencies' feeds merged into one (`FeedRegion`).
        case region([RegionPart])

        public var description: String {
            switch self {
            case .path(let path): path
            case .url(let url): url
            case .zip(_, let description): description
            case .region(let parts): "region of " + parts.map { "\($0.name) (\($0.source.description))" }.joined(separator: ", ")
            }
        }
    }

    /// One feed of a region: its ids are prefixed with `name`.
    public struct RegionPart: Sendable, Equatable {
        public var name: String
        public var source: Source

        public init(name: String, source: Source) {
            self.name = name
            self.source = source
        }
    }

    /// What an import did; a new version comes with its timetable, built once.
    public struct Outcome: Sendable {
        public var record: ImportRecord
        public var version: FeedVersionRecord?
        public var report: FeedReport?
        public var timetable: Timetable?
        /// Another import of the feed held the lease.
        public var busy: Bool = false
    }

    let database: any Database
    let config: TransitConfig
    let fetcher: FeedFetcher?
    let clock: any HeraldClock
    let logger: Logger
    let store = FeedStore()

    public init(database: any Database, config: TransitConfig, fetcher: FeedFetcher?, clock: any HeraldClock, logger: Logger) {
        self.database = database
        self.config = config
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
    }

    var now: Int64 { clock.now().epochMilliseconds }
    var maxUncompressed: Int { Self.maxUncompressed(config) }
    /// How far a feed may expand: 16 times the largest zip taken, at most 4 GiB.
    static func maxUncompressed(_ config: TransitConfig) -> Int { min(4 << 30, config.maxFeedBytes * 16) }

    /// Registers an import as running (so its status can be read at once) and returns its record.
    public func begin(feed: String, source: Source, requestedBy: String?) async throws -> ImportRecord {
        let record = ImportRecord(
            id: Identifier.make("imp"), feedName: feed, status: .running, source: source.description, requestedBy: requestedBy, createdAt: now)
        let url: String? = if case .url(let value) = source { value } else { nil }
        try await database.transaction { [store, now] db in
            try await store.ensure(db, name: feed, sourceURL: url, now: now)
            try await store.insert(db, record)
        }
        return record
    }

    /// Runs `record`'s import to its end. Errors of the feed end up in the record, not thrown;
    /// a database that fails is thrown (the record stays `running`). `activated` runs once a
    /// new version serves in the database and before the record says so (the server puts it
    /// in service there, so whoever reads `succeeded` gets answers from it).
    /// `force`: replace the version in service even with one serving nothing or less than
    /// half of it (`refusal(of:replacing:)`).
    public func run(
        _ record: ImportRecord, source: Source, force: Bool = false, progress: @escaping @Sendable (FeedImportProgress) -> Void = { _ in },
        activated: @Sendable (FeedVersionRecord, Timetable) async throws -> Void = { _, _ in }
    ) async throws -> Outcome {
        var record = record
        let leaseUntil = now + 30 * 60 * 1000
        let leased = try await database.withConnection { [store, now, feed = record.feedName, id = record.id] db in
            try await store.leaseImport(db, name: feed, importID: id, now: now, until: leaseUntil)
        }
        guard leased else {
            record.status = .failed
            record.error = "another import of \(record.feedName) is running"
            try await finish(&record)
            return Outcome(record: record, busy: true)
        }
        let release = { [database, store, id = record.id, feed = record.feedName] in
            try? await database.withConnection { db in try await store.releaseImport(db, name: feed, importID: id) }
        }
        do {
            let outcome = try await load(&record, source: source, force: force, progress: progress, activated: activated)
            await release()
            return outcome
        } catch {
            await release()
            throw error
        }
    }

    func finish(_ record: inout ImportRecord) async throws {
        record.finishedAt = now
        let finished = record
        try await database.withConnection { [store] db in try await store.finish(db, finished) }
    }

    func failed(_ record: inout ImportRecord, error: String? = nil, report: FeedReport? = nil) async throws -> Outcome {
        record.status = .failed
        record.error = error
        record.report = report.map(FeedReportJSON.text)
        try await finish(&record)
        logger.warning(
            "feed import refused", metadata: ["feed": "\(record.feedName)", "import": "\(record.id)", "reason": "\(error ?? "the feed has errors")"])
        return Outcome(record: record, report: report)
    }

    /// Why a version that checks out must not replace the one in service: it would serve
    /// nothing, or less than half of the stop times (a truncated upload, a producer's empty
    /// `stop_times.txt`). nil: it may.
    static func refusal(of timetable: Timetable, replacing active: FeedVersionRecord?) -> String? {
        let stopTimes = timetable.feed.stopTimes.count
        let runs = timetable.feed.trips.indices.contains { timetable.feed.stopTimes.range(trip: Int32($0)).count >= 2 }
        if stopTimes == 0 || !runs || timetable.calendar.days == nil {
            return "the feed serves no trips (no stop times, no trip with two stops, or no service day)"
        }
        if let active, active.stopTimeCount > 0, Int64(stopTimes) * 2 < active.stopTimeCount {
            return "the feed has \(stopTimes) stop times, less than half of the \(active.stopTimeCount) of the version in service"
        }
        return nil
    }

    func load(
        _ record: inout ImportRecord, source: Source, force: Bool, progress: @escaping @Sendable (FeedImportProgress) -> Void,
        activated: @Sendable (FeedVersionRecord, Timetable) async throws -> Void
    ) async throws -> Outcome {
        let archive: FeedArchive
        do {
            archive = try await open(source)
        } catch let error as FeedArchiveError {
            return try await failed(&record, error: error.description)
        } catch let error as FeedFetcher.FetchError {
            return try await failed(&record, error: error.description)
        } catch let error as FeedRegion.MergeError {
            return try await failed(&record, error: error.description)
        }
        progress(.read(bytes: archive.zipBytes.count))
        let sha256 = SHA256.hash(data: archive.zipBytes).map { String(format: "%02x", $0) }.joined()
        let active = try await database.withConnection { [store, feed = record.feedName] db -> FeedVersionRecord? in
            guard let id = try await store.feed(db, name: feed)?.activeVersion else { return nil }
            return try await store.version(db, id: id)
        }
        if let active, active.sha256 == sha256 {
            record.status = .unchanged
            record.versionID = active.id
            try await finish(&record)
            return Outcome(record: record, version: active)
        }
        let started = ContinuousClock.now
        let (maxDays, today) = (config.maxServiceDays, Int32(now / 86_400_000))
        // Seconds of CPU for a large feed: off the cooperative pool, so the node keeps serving.
        let (parsed, parseReport, built) = try await BlockingWork.run { () -> (TransitFeed?, FeedReport, Result<Timetable, any Error>?) in
            let (parsed, parseReport) = FeedParser.parse(archive, scope: .full)
            var report = parseReport
            guard let feed = parsed else { return (nil, report, nil) }
            // The timetable keeps only what answers need (what a node loading the version
            // reads: `FeedParser.Scope.serving`); shapes go to the rows only.
            var serving = feed
            serving.shapes = []
            if let kept = serving.boundServiceDays(maxDays: maxDays, today: today) {
                report.add(
                    "service_days_beyond_limit", .warning,
                    .init(
                        file: "calendar.txt",
                        message:
                            "the calendar spans more than transit.max_service_days (\(maxDays)); \(ServiceDate.iso(kept.lowerBound)) to \(ServiceDate.iso(kept.upperBound)) is kept"
                    ))
            }
            return (feed, report, Result { try Timetable(feed: serving) })
        }
        let report = parseReport
        guard let feed = parsed, let built else { return try await failed(&record, report: report) }
        let timetable: Timetable
        do {
            timetable = try built.get()
        } catch {
            return try await failed(&record, error: "the agency time zone \(feed.timezone) is unknown")
        }
        if let refusal = Self.refusal(of: timetable, replacing: active), !force {
            return try await failed(&record, error: refusal + " (import it with force to replace the version in service anyway)", report: report)
        }
        let parseTime = ContinuousClock.now - started
        progress(.checked(rows: feed.rowCount, warnings: report.warningCount))
        let version = FeedVersionRecord(
            id: Identifier.make("fv"), feedName: record.feedName,
            version: feed.feedInfo?.version ?? "\(ServiceDate.compact(Int32(now / 86_400_000)))-\(sha256.prefix(8))", sha256: sha256,
            sizeBytes: Int64(archive.zipBytes.count), status: .loading, source: record.source, rowCount: Int64(feed.rowCount),
            stopTimeCount: Int64(feed.stopTimes.count), report: FeedReportJSON.text(report), importedAt: now)
        var offline: OfflineDatabase.Built?
        do {
            try await database.withConnection { [store] db in try await store.insert(db, version) }
            try await store.writeFile(database, versionID: version.id, zip: archive.zipBytes)
            var writer = FeedRowWriter(database: database, versionID: version.id)
            let total = feed.rowCount
            let done = Mutex(0)
            writer.written = { rows in
                progress(
                    .writing(
                        written: done.withLock {
                            $0 += rows
                            return $0
                        }, of: total))
            }
            try await writer.write(feed)
            if config.offlineDays > 0 {
                let built = try await OfflineDatabase.build(
                    timetable, feedName: record.feedName, version: version.version, versionID: version.id, generatedAt: now,
                    today: timetable.zone.localDay(now / 1000), days: config.offlineDays, logger: logger)
                try await store.writeOfflineFile(database, versionID: version.id, bytes: built.bytes, sha256: built.sha256)
                offline = built
            }
        } catch {
            try? await store.deleteRows(database, versionID: version.id)
            throw error
        }
        let previous = try await database.transaction { [store, now, feed = record.feedName] db in
            try await store.activate(db, feed: feed, versionID: version.id, now: now)
        }
        var ready = version
        ready.status = .ready
        ready.activatedAt = now
        ready.offlineSizeBytes = offline.map { Int64($0.bytes.count) }
        ready.offlineSHA256 = offline?.sha256
        try await activated(ready, timetable)
        progress(.activated(version: version.version))
        record.status = .succeeded
        record.versionID = version.id
        record.report = FeedReportJSON.text(report)
        try await finish(&record)
        logger.info(
            "feed version activated",
            metadata: [
                "feed": "\(record.feedName)", "version": "\(version.version)", "version_id": "\(version.id)", "rows": "\(feed.rowCount)",
                "parse_ms": "\(parseTime.wholeMilliseconds)", "warnings": "\(report.warningCount)",
            ])
        if let previous { try? await store.deleteRows(database, versionID: previous) }
        return Outcome(record: record, version: ready, report: report, timetable: timetable)
    }

    func open(_ source: Source) async throws -> FeedArchive {
        switch source {
        case .path(let path):
            if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > config.maxFeedBytes {
                throw FeedArchiveError.tooLarge(limit: config.maxFeedBytes)
            }
            return try FeedArchive(path: path, maxUncompressedBytes: maxUncompressed)
        case .url(let url):
            guard let fetcher else { throw FeedFetcher.FetchError.transport("no HTTP client") }
            switch try await fetcher.fetch(url, maxBytes: config.maxFeedBytes, timeout: .seconds(config.downloadTimeoutSeconds)) {
            case .fetched(let body, _, _): return try FeedArchive(zip: body, maxUncompressedBytes: maxUncompressed)
            case .notModified: throw FeedFetcher.FetchError.status(304)
            }
        case .zip(let data, _):
            guard data.count <= config.maxFeedBytes else { throw FeedArchiveError.tooLarge(limit: config.maxFeedBytes) }
            return try FeedArchive(zip: data, maxUncompressedBytes: maxUncompressed)
        case .region(let parts):
            var archives: [(name: String, archive: FeedArchive)] = []
            for part in parts { archives.append((part.name, try await open(part.source))) }
            let (merging, limit) = (archives, maxUncompressed)
            // The merge rewrites every row (a second or so for a city's feeds): off the cooperative pool.
            return try await BlockingWork.run { try FeedRegion.merge(merging, maxUncompressedBytes: limit) }
        }
    }

    /// Marks imports that were running on a node that stopped (none holds its feed's lease) failed.
    public func failInterrupted() async throws {
        let now = self.now
        try await database.withConnection { db in
            try await db.raw(
                """
                UPDATE transit_imports SET status = 'failed', error = 'interrupted: the node running it stopped', finished_at = \(bind: now)
                WHERE status = 'running' AND created_at < \(bind: now) AND NOT EXISTS (
                    SELECT 1 FROM transit_feeds f WHERE f.name = transit_imports.feed_name AND f.import_id = transit_imports.id
                        AND f.import_lease_until > \(bind: now))
                """
            ).run()
        }
    }

    /// Deletes the rows of retired versions and of loads abandoned over an hour ago.
    public func collectGarbage() async throws {
        let stale = now - 3_600_000
        let versions = try await database.withConnection { [store] db in try await store.deletable(db, staleBefore: stale) }
        for version in versions { try await store.deleteRows(database, versionID: version) }
    }
}

/// A report as stored and answered: counts, then each notice with its samples.
public enum FeedReportJSON {
    public static func value(_ report: FeedReport) -> JSONValue {
        [
            "errors": .number(Double(report.errorCount)), "warnings": .number(Double(report.warningCount)),
            "notices": .array(
                report.sorted.map { notice in
                    [
                        "code": .string(notice.code), "severity": .string(notice.severity.rawValue), "count": .number(Double(notice.count)),
                        "samples": .array(
                            notice.samples.map { sample in
                                var object: [String: JSONValue] = ["message": .string(sample.message)]
                                if let file = sample.file { object["file"] = .string(file) }
                                if let line = sample.line { object["line"] = .number(Double(line)) }
                                if let field = sample.field { object["field"] = .string(field) }
                                if let value = sample.value { object["value"] = .string(value) }
                                return .object(object)
                            }),
                    ]
                }),
        ]
    }

    public static func text(_ report: FeedReport) -> String {
        var writer = JSONWriter()
        writer.write(value(report))
        return writer.string
    }
}
