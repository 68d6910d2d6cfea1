import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Brings this node up to date with the database: the version each feed serves and the
/// latest good realtime message of each source, loaded into `ServedFeeds`.
///
/// Why every node loads from the database: the database names the version each feed serves
/// and keeps the latest good realtime message of each source, so a node that starts, or
/// hears an announcement on the `$transit` room (an import or a realtime message taken in by
/// another node), reads what changed and answers from the same data as the others.
public final class TransitLoader: Sendable {
    /// Stored data a node skipped because it does not load: reported, never a trap.
    public struct LoadProblem: Sendable, Equatable {
        public var versionID: String?
        public var message: String
    }

    let config: TransitConfig
    let database: any Database
    let clock: any HeraldClock
    let logger: Logger
    let importer: FeedImporter
    let statistics: TransitStatistics
    let served: ServedFeeds
    let announcements: TransitAnnouncements
    let alertIntake: AlertIntake
    let feedStore = FeedStore()
    let realtimeStore = RealtimeFeedStore()
    private let started = Atomic(false)
    /// Stored data this node could not load, by feed (or `realtime:{source}`).
    private let problems = Mutex<[String: LoadProblem]>([:])

    init(
        config: TransitConfig, database: any Database, clock: any HeraldClock, logger: Logger, importer: FeedImporter, statistics: TransitStatistics,
        served: ServedFeeds, announcements: TransitAnnouncements, alertIntake: AlertIntake
    ) {
        self.config = config
        self.database = database
        self.clock = clock
        self.logger = logger
        self.importer = importer
        self.statistics = statistics
        self.served = served
        self.announcements = announcements
        self.alertIntake = alertIntake
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// What this node could not load (a stored feed version, a stored realtime message),
    /// by feed or `realtime:{source}`: for /readyz and `herald doctor`.
    public var loadProblems: [String: LoadProblem] { problems.withLock { $0 } }

    /// Whether `start()` has loaded the feeds (the reload loop does it when start-up could not).
    public var isStarted: Bool { started.load(ordering: .acquiring) }

    // MARK: Start and reload

    /// Collects what interrupted imports left, registers the configured feeds and sources (so
    /// schedulers can claim them), then loads the feeds. The reload loop runs it once the
    /// node listens (/readyz says `loading` until it is done).
    public func start() async throws {
        try await importer.collectGarbage()
        try await importer.failInterrupted()
        let now = nowMs
        try await database.withConnection { [config, feedStore, realtimeStore] db in
            for feed in config.feeds { try await feedStore.ensure(db, name: feed.name, sourceURL: feed.url, now: now) }
            for source in config.realtime { try await realtimeStore.ensure(db, source: source.name, feed: config.feedName(of: source), now: now) }
        }
        try await reload()
        started.store(true, ordering: .releasing)
    }

    /// Brings this node up to date with the database: the versions the feeds serve and the
    /// latest realtime messages. Cheap when nothing changed (two small reads).
    public func reload() async throws {
        try await served.gate.run {
            let feeds = try await database.withConnection { [feedStore] db in try await feedStore.feeds(db) }
            var changedFeeds: Set<String> = []
            for record in feeds {
                guard let active = record.activeVersion else { continue }
                if served.snapshot.feed(record.name)?.version.id == active { continue }
                // A stored version that does not load is logged, skipped and reported
                // (`loadProblems`, /readyz, herald doctor): it must never stop the node.
                if problems.withLock({ $0[record.name]?.versionID == active }) { continue }
                guard let loaded = try await loadVersion(active) else {
                    problems.withLock { $0[record.name] = LoadProblem(versionID: active, message: "the stored version \(active) does not load") }
                    continue
                }
                problems.withLock { _ = $0.removeValue(forKey: record.name) }
                served.install(loaded)
                changedFeeds.insert(record.name)
            }
            let heads = try await database.withConnection { [realtimeStore] db in try await realtimeStore.heads(db) }
            let known = served.receivedTimes()
            for head in heads where head.receivedAt != nil && known[head.source] != head.receivedAt {
                guard let row = try await database.withConnection({ [realtimeStore] db in try await realtimeStore.find(db, source: head.source) }),
                    let payload = row.payload, let receivedAt = row.receivedAt
                else { continue }
                do {
                    let decoded = try RealtimeFeedDecoder.decode(payload, maxBytes: config.maxRealtimeBytes)
                    // The decoded header, not the stored column: the decoder bounds it (`RealtimeBounds`),
                    // and a row written before that bound may hold anything.
                    served.update(
                        source: row.source,
                        ServedFeeds.SourceState(feed: row.feedName, decoded: decoded, receivedAt: receivedAt, feedTimestamp: decoded.timestamp))
                    changedFeeds.insert(row.feedName)
                    problems.withLock { _ = $0.removeValue(forKey: "realtime:" + row.source) }
                } catch {
                    logger.error("a stored realtime message does not decode", metadata: ["source": "\(row.source)"])
                    problems.withLock {
                        $0["realtime:" + row.source] = LoadProblem(versionID: nil, message: "the stored realtime message does not decode")
                    }
                }
            }
            let now = nowMs
            let (builtAt, lapsed) = served.lapsedSinceBuild(now: now)
            changedFeeds.formUnion(lapsed)
            if now - builtAt > 60_000 { changedFeeds.formUnion(served.snapshot.feeds.map(\.name)) }
            if !changedFeeds.isEmpty {
                await served.rebuildOverlays(changedFeeds)
                alertIntake.signal()
            }
        }
    }

    /// Loads the feeds once the schema is ready, then keeps this node current: at every
    /// announcement on `$transit` and at least every `reload_interval_seconds`.
    public func reloadLoop(ready: @escaping @Sendable () async -> Bool) -> any Service {
        DuePoller("transit reload", interval: .seconds(config.reloadIntervalSeconds), wake: announcements.wake, logger: logger, ready: ready) { [self] in
            if isStarted {
                try await reload()
            } else {
                try await start()
            }
        }
    }

    // MARK: Loading a stored version

    /// Reads a version's zip from the database and builds its timetable.
    func loadVersion(_ id: String) async throws -> LoadedFeed? {
        guard let version = try await database.withConnection({ [feedStore] db in try await feedStore.version(db, id: id) }),
            let zip = try await feedStore.readFile(database, versionID: id)
        else { return nil }
        let walking = config.planner.walking
        let config = self.config
        let now = nowMs / 1000
        // Seconds of CPU for a large feed: off the cooperative pool, so the node keeps serving.
        let built: (Timetable?, JourneyPlanner?, FeedReport)
        do {
            built = try await BlockingWork.run { () -> (Timetable?, JourneyPlanner?, FeedReport) in
                let (timetable, report) = try Self.timetable(zip: zip, importedAt: version.importedAt, config: config)
                return (timetable, timetable.map { Self.planner($0, walking: walking, now: now) }, report)
            }
        } catch {
            // The stored zip, not the database: it will not load next time either.
            logger.error("a stored feed version does not load", metadata: ["version_id": "\(id)", "error": "\(error)"])
            return nil
        }
        let (timetable, planner, report) = built
        guard let timetable else {
            logger.error("a stored feed version does not parse", metadata: ["version_id": "\(id)", "report": "\(FeedReportJSON.text(report))"])
            return nil
        }
        statistics.loadedVersion()
        return LoadedFeed(name: version.feedName, version: version, timetable: timetable, planner: planner)
    }

    /// A stored version's timetable as every node builds it: the serving scope, the calendar
    /// days its import kept (counted from the import's date, so every node holds the same).
    static func timetable(zip: Data, importedAt: Int64, config: TransitConfig) throws -> (Timetable?, FeedReport) {
        let archive = try FeedArchive(zip: zip, maxUncompressedBytes: FeedImporter.maxUncompressed(config))
        let parsed = FeedParser.parse(archive, scope: .serving)
        var feed = parsed.0
        _ = feed?.boundServiceDays(maxDays: config.maxServiceDays, today: Int32(importedAt / 86_400_000))
        return (try feed.map { try Timetable(feed: $0) }, parsed.1)
    }

    /// The journey planner of a timetable: its network is built once per feed version, and
    /// today's service window with it, so the first rider's plan does not pay for building it.
    static func planner(_ timetable: Timetable, walking: WalkingRules, now: Int64) -> JourneyPlanner {
        let planner = JourneyPlanner(network: TransitNetwork(timetable: timetable, walking: walking), timetable: timetable)
        planner.prepare(around: now)
        return planner
    }

    /// What `herald doctor` reports: every stored feed version in service and realtime
    /// message, loaded as a node would (without serving them); those a node would skip.
    public static func storedDataProblems(database: any Database, config: TransitConfig) async throws -> (checked: Int, problems: [String: LoadProblem]) {
        let feeds = FeedStore()
        let realtime = RealtimeFeedStore()
        var checked = 0
        var problems: [String: LoadProblem] = [:]
        for record in try await database.withConnection({ db in try await feeds.feeds(db) }) {
            guard let active = record.activeVersion else { continue }
            checked += 1
            guard let version = try await database.withConnection({ db in try await feeds.version(db, id: active) }),
                let zip = try await feeds.readFile(database, versionID: active)
            else {
                problems[record.name] = LoadProblem(versionID: active, message: "the version in service \(active) is not stored")
                continue
            }
            let loaded = try? await BlockingWork.run { try Self.timetable(zip: zip, importedAt: version.importedAt, config: config).0 != nil }
            if loaded != true { problems[record.name] = LoadProblem(versionID: active, message: "the stored version \(active) does not load") }
        }
        for head in try await database.withConnection({ db in try await realtime.heads(db) }) where head.receivedAt != nil {
            guard let row = try await database.withConnection({ db in try await realtime.find(db, source: head.source) }), let payload = row.payload else {
                continue
            }
            checked += 1
            if (try? RealtimeFeedDecoder.decode(payload, maxBytes: config.maxRealtimeBytes)) == nil {
                problems["realtime:" + head.source] = LoadProblem(versionID: nil, message: "the stored realtime message does not decode")
            }
        }
        return (checked, problems)
    }
}
