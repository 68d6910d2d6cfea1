import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage
import Logging
import ServiceLifecycle

/// The feeds' versions: imports (from the CLI, the API's import runner and the scheduled
/// refresh), the import records, and the files of a served version that apps download.
///
/// Why apart from the loader: an import writes a new version and puts it in service on this
/// node at once, then announces it; the loader only reads what the database serves. Both
/// change the served feeds through `ServedFeeds`, neither through the other.
public final class TransitFeeds: Sendable {
    let config: TransitConfig
    let database: any Database
    let clock: any HeraldClock
    let logger: Logger
    let fetcher: FeedFetcher
    let importer: FeedImporter
    let statistics: TransitStatistics
    let served: ServedFeeds
    let announcements: TransitAnnouncements
    let feedStore = FeedStore()

    init(
        config: TransitConfig, database: any Database, clock: any HeraldClock, logger: Logger, fetcher: FeedFetcher, importer: FeedImporter,
        statistics: TransitStatistics, served: ServedFeeds, announcements: TransitAnnouncements
    ) {
        self.config = config
        self.database = database
        self.clock = clock
        self.logger = logger
        self.fetcher = fetcher
        self.importer = importer
        self.statistics = statistics
        self.served = served
        self.announcements = announcements
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    // MARK: Imports

    /// Imports a feed to the end (the CLI, the scheduled refresh, the import runner). A new
    /// version is put in service here at once and announced to the other nodes.
    public func importFeed(_ name: String, source: FeedImporter.Source, requestedBy: String?, force: Bool = false) async throws -> FeedImporter.Outcome {
        let record = try await importer.begin(feed: name, source: source, requestedBy: requestedBy)
        return try await runImport(record, source: source, force: force)
    }

    /// Runs an import registered with `importer.begin`.
    public func runImport(_ record: ImportRecord, source: FeedImporter.Source, force: Bool = false) async throws -> FeedImporter.Outcome {
        let outcome = try await importer.run(
            record, source: source, force: force,
            activated: { version, timetable in
                let loaded = try await self.withPlanner(version, timetable)
                try await self.served.gate.run {
                    self.served.install(loaded)
                    await self.served.rebuildOverlays([version.feedName])
                }
            })
        statistics.imported(outcome.record.status)
        if let version = outcome.version, outcome.record.status == .succeeded {
            await announcements.announce(["kind": "version", "feed": .string(version.feedName), "version_id": .string(version.id)])
        }
        return outcome
    }

    /// A version just imported, with its planner built off the cooperative pool.
    func withPlanner(_ version: FeedVersionRecord, _ timetable: Timetable) async throws -> LoadedFeed {
        let walking = config.planner.walking
        let now = nowMs / 1000
        let planner = try await BlockingWork.run { TransitLoader.planner(timetable, walking: walking, now: now) }
        return LoadedFeed(name: version.feedName, version: version, timetable: timetable, planner: planner)
    }

    public func importRecord(_ id: String) async throws -> ImportRecord? {
        try await database.withConnection { [feedStore] db in try await feedStore.importRecord(db, id: id) }
    }

    // MARK: Files apps download

    /// A served version's offline database (`OfflineDatabase`); nil for a version without one.
    public func offlineFile(_ version: FeedVersionRecord) async throws -> Data? {
        guard version.offlineSHA256 != nil else { return nil }
        return try await feedStore.readOfflineFile(database, versionID: version.id)
    }

    /// A served version's zip, for apps that cache the timetable offline.
    public func feedFile(_ version: FeedVersionRecord) async throws -> Data? {
        try await feedStore.readFile(database, versionID: version.id)
    }

    // MARK: Scheduled refresh

    /// Checks each configured feed with a URL (or a region's parts) when it is due (at start,
    /// then every refresh interval).
    public func refreshLoop(ready: @escaping @Sendable () async -> Bool) -> (any Service)? {
        let feeds = config.feeds.filter { $0.url != nil || !$0.parts.isEmpty }
        guard !feeds.isEmpty else { return nil }
        // Checks are claimed in the database; this only sets how soon after it is due a check runs.
        let interval = max(1, min(30, feeds.map(\.refreshIntervalSeconds).min()! / 2))
        return DuePoller("transit feed refresh", interval: .seconds(interval), wake: WakeSignal(), logger: logger, ready: ready) { [self] in
            for feed in feeds { try await checkFeed(feed) }
        }
    }

    /// One scheduled check of a configured feed: a conditional GET, an import when it changed.
    /// Exactly one node runs each due check (a conditional update claims it).
    func checkFeed(_ feed: TransitConfig.FeedConfig) async throws {
        guard feed.url != nil || !feed.parts.isEmpty else { return }
        let now = nowMs
        let claimed = try await database.withConnection { [feedStore] db in
            try await feedStore.claimCheck(db, name: feed.name, now: now, next: now + Int64(feed.refreshIntervalSeconds) * 1000)
        }
        guard claimed else { return }
        let state = try await database.withConnection { [feedStore] db in try await feedStore.feed(db, name: feed.name) }
        // Without a serving version the validators would only save a download of nothing.
        let conditional = state?.activeVersion != nil
        do {
            guard
                let (source, etag, lastModified) = try await download(
                    feed, etag: conditional ? state?.etag : nil, lastModified: conditional ? state?.lastModified : nil)
            else {
                try await database.withConnection { [feedStore] db in
                    try await feedStore.recordCheck(db, name: feed.name, etag: nil, lastModified: nil, error: nil, now: now)
                }
                return
            }
            let result = try await importFeed(feed.name, source: source, requestedBy: "scheduler")
            // Keep the validators only when the feed is in service (so a refused one is fetched again).
            let keep = result.record.status == .succeeded || result.record.status == .unchanged
            try await database.withConnection { [feedStore] db in
                try await feedStore.recordCheck(
                    db, name: feed.name, etag: keep ? etag : nil, lastModified: keep ? lastModified : nil,
                    error: keep ? nil : (result.record.error ?? "the feed has errors (import \(result.record.id))"), now: now)
            }
        } catch let error as FeedFetcher.FetchError {
            logger.warning("fetching the feed failed", metadata: ["feed": "\(feed.name)", "error": "\(error)"])
            try await database.withConnection { [feedStore] db in
                try await feedStore.recordCheck(db, name: feed.name, etag: nil, lastModified: nil, error: error.description, now: now)
                // A failed download is tried again in five minutes, not a refresh interval later.
                try await feedStore.reschedule(db, name: feed.name, at: now + 300_000)
            }
        }
    }

    /// The feed's files as an import source and the validators to keep; nil when the server
    /// says they did not change. A region's parts are fetched whole, every one at each check
    /// (the merge needs them all); an unchanged region imports as `unchanged`, its merged zip
    /// being the same bytes.
    func download(_ feed: TransitConfig.FeedConfig, etag: String?, lastModified: String?) async throws -> (FeedImporter.Source, String?, String?)? {
        let timeout = Duration.seconds(config.downloadTimeoutSeconds)
        guard feed.parts.isEmpty else {
            var parts: [FeedImporter.RegionPart] = []
            for part in feed.parts {
                let outcome = try await fetcher.fetch(
                    part.url, etag: nil, lastModified: nil, headers: part.headers, maxBytes: config.maxFeedBytes, timeout: timeout)
                guard case .fetched(let body, _, _) = outcome else { throw FeedFetcher.FetchError.status(304) }
                parts.append(FeedImporter.RegionPart(name: part.name, source: .zip(body, description: part.url)))
            }
            return (.region(parts), nil, nil)
        }
        guard let url = feed.url else { return nil }
        switch try await fetcher.fetch(url, etag: etag, lastModified: lastModified, headers: feed.headers, maxBytes: config.maxFeedBytes, timeout: timeout) {
        case .notModified: return nil
        case .fetched(let body, let etag, let lastModified): return (.zip(body, description: url), etag, lastModified)
        }
    }
}
