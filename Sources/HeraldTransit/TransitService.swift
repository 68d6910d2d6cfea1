import Foundation
import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging
import Synchronization

/// The transit backend of one node: the feed versions it serves (in memory, swapped whole),
/// the realtime data laid over them, imports, favourites and posted alerts.
///
/// Why every node holds the same state from the database: the database names the version
/// each feed serves and keeps the latest good realtime message of each source, so a node
/// that starts, or hears an announcement on the `$transit` room (an import or a realtime
/// message taken in by another node), reads what changed and answers from the same data as
/// the others. Changes to the in-memory state go through one gate, so live updates are
/// computed in order.
public final class TransitService: Sendable {
    public let config: TransitConfig
    public let database: any Database
    public let clock: any HeraldClock
    public let logger: Logger
    public let hub: RealtimeHub
    public let fetcher: FeedFetcher
    public let importer: FeedImporter
    public let statistics = TransitStatistics()
    /// Journey searches: threads of their own, fair between callers (`PlannerPool`).
    public let plannerPool: PlannerPool
    public let live: LiveUpdates
    let follower: TransitFollower
    let gate = AsyncSerialGate()
    let feedStore = FeedStore()
    let realtimeStore = RealtimeFeedStore()
    let favoriteStore = FavoriteStore()
    let alertStore = AlertStore()

    struct SourceState {
        var feed: String
        var decoded: RealtimeFeed
        var receivedAt: Int64
        var feedTimestamp: Int64?
    }

    struct State {
        var snapshot = TransitSnapshot.empty
        var sources: [String: SourceState] = [:]
        var overlaysBuiltAt: Int64 = 0
        /// Stored data this node could not load, by feed (or `realtime:{source}`).
        var loadProblems: [String: LoadProblem] = [:]
    }

    /// Stored data a node skipped because it does not load: reported, never a trap.
    public struct LoadProblem: Sendable, Equatable {
        public var versionID: String?
        public var message: String
    }

    /// What this node could not load (a stored feed version, a stored realtime message),
    /// by feed or `realtime:{source}`: for /readyz and `herald doctor`.
    public var loadProblems: [String: LoadProblem] { state.withLock { $0.loadProblems } }

    private let state = Mutex(State())
    private let started = Atomic(false)
    private let intakeHandlers = Mutex<[@Sendable () -> Void]>([])

    /// Called after alerts may have changed on this node: a realtime message taken in or
    /// loaded, an alert posted (the alert pusher wakes on it).
    public func onAlertIntake(_ handler: @escaping @Sendable () -> Void) {
        intakeHandlers.withLock { $0.append(handler) }
    }

    func alertIntake() {
        for handler in intakeHandlers.withLock({ $0 }) { handler() }
    }

    /// Whether `start()` has loaded the feeds (the reload loop does it when start-up could not).
    public var isStarted: Bool { started.load(ordering: .acquiring) }

    /// Every node hears imports and realtime intake here; no client can subscribe to it.
    public static let announcementRoom = "$transit"

    /// Where departures Live Activities and channels get the boards (nil: not published).
    let liveActivities: LiveActivityService?
    let publishedBoards = PublishedBoards()

    public init(
        config: TransitConfig, database: any Database, hub: RealtimeHub, liveActivities: LiveActivityService? = nil, clock: any HeraldClock,
        logger: Logger
    ) {
        self.config = config
        self.liveActivities = liveActivities
        self.database = database
        self.hub = hub
        self.clock = clock
        self.logger = logger
        fetcher = FeedFetcher()
        importer = FeedImporter(database: database, config: config, fetcher: fetcher, clock: clock, logger: logger)
        live = LiveUpdates(hub: hub, clock: clock, planner: config.planner)
        plannerPool = PlannerPool(
            threads: config.planner.threads ?? max(1, ProcessInfo.processInfo.activeProcessorCount - 1), queueLimit: config.planner.maxQueued,
            maxWait: .milliseconds(config.planner.maxQueueMs))
        follower = TransitFollower()
        hub.join(follower, room: Self.announcementRoom)
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// The feeds as they are now; take it once per answer.
    public var snapshot: TransitSnapshot { state.withLock { $0.snapshot } }

    /// The name a feed-less request means: the first configured feed, else the first loaded, else `default`.
    public var defaultFeedName: String {
        config.feeds.first?.name ?? snapshot.feeds.first?.name ?? TransitConfig.defaultFeedName
    }

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
        try await gate.run {
            let feeds = try await database.withConnection { [feedStore] db in try await feedStore.feeds(db) }
            var changedFeeds: Set<String> = []
            for record in feeds {
                guard let active = record.activeVersion else { continue }
                if snapshot.feed(record.name)?.version.id == active { continue }
                // A stored version that does not load is logged, skipped and reported
                // (`loadProblems`, /readyz, herald doctor): it must never stop the node.
                if state.withLock({ $0.loadProblems[record.name]?.versionID == active }) { continue }
                guard let loaded = try await loadVersion(active) else {
                    state.withLock { $0.loadProblems[record.name] = LoadProblem(versionID: active, message: "the stored version \(active) does not load") }
                    continue
                }
                state.withLock { _ = $0.loadProblems.removeValue(forKey: record.name) }
                install(loaded)
                changedFeeds.insert(record.name)
            }
            let heads = try await database.withConnection { [realtimeStore] db in try await realtimeStore.heads(db) }
            let known = state.withLock { $0.sources.mapValues(\.receivedAt) }
            for head in heads where head.receivedAt != nil && known[head.source] != head.receivedAt {
                guard let row = try await database.withConnection({ [realtimeStore] db in try await realtimeStore.find(db, source: head.source) }),
                    let payload = row.payload, let receivedAt = row.receivedAt
                else { continue }
                do {
                    let decoded = try RealtimeFeedDecoder.decode(payload, maxBytes: config.maxRealtimeBytes)
                    state.withLock {
                        // The decoded header, not the stored column: the decoder bounds it (`RealtimeBounds`),
                        // and a row written before that bound may hold anything.
                        $0.sources[row.source] = SourceState(feed: row.feedName, decoded: decoded, receivedAt: receivedAt, feedTimestamp: decoded.timestamp)
                    }
                    changedFeeds.insert(row.feedName)
                    state.withLock { _ = $0.loadProblems.removeValue(forKey: "realtime:" + row.source) }
                } catch {
                    logger.error("a stored realtime message does not decode", metadata: ["source": "\(row.source)"])
                    state.withLock {
                        $0.loadProblems["realtime:" + row.source] = LoadProblem(versionID: nil, message: "the stored realtime message does not decode")
                    }
                }
            }
            let now = nowMs
            let staleAfter = Int64(config.staleAfterSeconds) * 1000
            let (builtAt, lapsed) = state.withLock { state -> (Int64, Set<String>) in
                // Feeds with a source that went stale since the last build: its predictions go now.
                let lapsed = state.sources.values.filter { source in
                    let time = source.feedTimestamp.map { $0 * 1000 } ?? source.receivedAt
                    return !RealtimeFreshness.isStale(time, now: state.overlaysBuiltAt, staleAfterMs: staleAfter)
                        && RealtimeFreshness.isStale(time, now: now, staleAfterMs: staleAfter)
                }
                return (state.overlaysBuiltAt, Set(lapsed.map(\.feed)))
            }
            changedFeeds.formUnion(lapsed)
            if now - builtAt > 60_000 { changedFeeds.formUnion(snapshot.feeds.map(\.name)) }
            if !changedFeeds.isEmpty {
                await rebuildOverlays(changedFeeds)
                alertIntake()
            }
        }
    }

    func state(update source: String, _ value: SourceState) {
        state.withLock { $0.sources[source] = value }
    }

    /// Reads a version's zip from the database and builds its timetable.
    func loadVersion(_ id: String) async throws -> LoadedFeed? {
        guard let version = try await database.withConnection({ [feedStore] db in try await feedStore.version(db, id: id) }),
            let zip = try await feedStore.readFile(database, versionID: id)
        else { return nil }
        let walking = config.planner.walking
        let config = self.config
        // Seconds of CPU for a large feed: off the cooperative pool, so the node keeps serving.
        let built: (Timetable?, JourneyPlanner?, FeedReport)
        do {
            built = try await BlockingWork.run { () -> (Timetable?, JourneyPlanner?, FeedReport) in
                let (timetable, report) = try Self.timetable(zip: zip, importedAt: version.importedAt, config: config)
                return (timetable, timetable.map { Self.planner($0, walking: walking) }, report)
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

    /// The journey planner of a timetable: its network is built once per feed version.
    static func planner(_ timetable: Timetable, walking: WalkingRules) -> JourneyPlanner {
        JourneyPlanner(network: TransitNetwork(timetable: timetable, walking: walking), timetable: timetable)
    }

    /// A version just imported, with its planner built off the cooperative pool.
    func withPlanner(_ version: FeedVersionRecord, _ timetable: Timetable) async throws -> LoadedFeed {
        let walking = config.planner.walking
        let planner = try await BlockingWork.run { Self.planner(timetable, walking: walking) }
        return LoadedFeed(name: version.feedName, version: version, timetable: timetable, planner: planner)
    }

    /// Puts a version in place of the feed's current one (or adds the feed).
    func install(_ loaded: LoadedFeed) {
        let version = loaded.version
        state.withLock { state in
            var feeds = state.snapshot.feeds.filter { $0.name != version.feedName }
            feeds.append(loaded)
            let order = config.feeds.map(\.name)
            feeds.sort { (order.firstIndex(of: $0.name) ?? Int.max, $0.name) < (order.firstIndex(of: $1.name) ?? Int.max, $1.name) }
            state.snapshot = TransitSnapshot(feeds: feeds)
        }
        logger.info("serving feed version", metadata: ["feed": "\(version.feedName)", "version": "\(version.version)", "version_id": "\(version.id)"])
    }

    /// Lays each changed feed's realtime sources over it again, then tells live subscribers
    /// what changed.
    func rebuildOverlays(_ names: Set<String>) async {
        let now = nowMs
        let after = state.withLock { state -> TransitSnapshot in
            var feeds = state.snapshot.feeds
            let staleAfter = Int64(config.staleAfterSeconds) * 1000
            for index in feeds.indices where names.contains(feeds[index].name) {
                let name = feeds[index].name
                let sources = state.sources.filter { $0.value.feed == name }.sorted { $0.key < $1.key }
                var times: [String: Int64] = [:]
                var layers: [RealtimeFeed] = []
                for (source, value) in sources {
                    let time = value.feedTimestamp.map { $0 * 1000 } ?? value.receivedAt
                    times[source] = time
                    // A stale source's predictions and positions are old news: only its alerts
                    // (which carry their own periods) are kept.
                    layers.append(RealtimeFreshness.isStale(time, now: now, staleAfterMs: staleAfter) ? value.decoded.alertsOnly : value.decoded)
                }
                feeds[index].overlay = RealtimeOverlay(feeds: layers, timetable: feeds[index].timetable, now: now / 1000)
                let configured = config.realtime.contains { config.feedName(of: $0) == name }
                feeds[index].realtime = RealtimeFreshness(expected: configured || !sources.isEmpty, dataTime: times.values.max(), sources: times)
            }
            state.snapshot = TransitSnapshot(feeds: feeds)
            state.overlaysBuiltAt = now
            return state.snapshot
        }
        await live.publish(snapshot: after)
        await publishDepartureActivities(snapshot: after, now: now)
    }

    /// Tells every node to reload (itself included: a no-op there).
    func announce(_ payload: JSONValue) async {
        do {
            try await hub.publish("changed", payload: payload, to: Self.announcementRoom, persist: false)
        } catch {
            logger.warning(
                "announcing a transit change failed; other nodes catch up within reload_interval_seconds", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
