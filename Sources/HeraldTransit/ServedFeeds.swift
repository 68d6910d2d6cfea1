import HeraldCore
import HeraldGTFS
import Logging
import Synchronization

/// What this node serves: the loaded feed versions with the realtime messages laid over
/// them, swapped whole, and the snapshot every answer reads.
///
/// Why one holder: the loader, imports and realtime intake change it; alerts, favourites,
/// planning, departures boards and the routes read it. Each takes it from here rather than
/// from one another, so the owners form layers instead of a web. Changes go through one
/// gate (`gate`), so live updates are computed in order.
public final class ServedFeeds: Sendable {
    /// A realtime source's latest good message, as laid over its feed.
    struct SourceState {
        var feed: String
        var decoded: RealtimeFeed
        var receivedAt: Int64
        var feedTimestamp: Int64?
    }

    private struct State {
        var snapshot = TransitSnapshot.empty
        var sources: [String: SourceState] = [:]
        var overlaysBuiltAt: Int64 = 0
    }

    let config: TransitConfig
    let clock: any HeraldClock
    let logger: Logger
    let live: LiveUpdates
    let boards: DepartureBoards
    /// Every change to what is served runs inside it (a reload, an import put in service, a
    /// realtime message taken in), so overlays are rebuilt and published in order.
    let gate = AsyncSerialGate()
    private let state = Mutex(State())

    init(config: TransitConfig, clock: any HeraldClock, logger: Logger, live: LiveUpdates, boards: DepartureBoards) {
        self.config = config
        self.clock = clock
        self.logger = logger
        self.live = live
        self.boards = boards
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// The feeds as they are now; take it once per answer.
    public var snapshot: TransitSnapshot { state.withLock { $0.snapshot } }

    /// The name a feed-less request means: the first configured feed, else the first loaded, else `default`.
    public var defaultFeedName: String {
        config.feeds.first?.name ?? snapshot.feeds.first?.name ?? TransitConfig.defaultFeedName
    }

    /// When each source's message laid over now arrived (the loader reads only newer ones).
    func receivedTimes() -> [String: Int64] {
        state.withLock { $0.sources.mapValues(\.receivedAt) }
    }

    /// Keeps a source's latest good message (laid over at the next `rebuildOverlays`).
    func update(source: String, _ value: SourceState) {
        state.withLock { $0.sources[source] = value }
    }

    /// When the overlays were last built, and the feeds with a source that went stale since
    /// then: their predictions go at the next build.
    func lapsedSinceBuild(now: Int64) -> (builtAt: Int64, feeds: Set<String>) {
        let staleAfter = Int64(config.staleAfterSeconds) * 1000
        return state.withLock { state -> (Int64, Set<String>) in
            // Feeds with a source that went stale since the last build: its predictions go now.
            let lapsed = state.sources.values.filter { source in
                let time = source.feedTimestamp.map { $0 * 1000 } ?? source.receivedAt
                return !RealtimeFreshness.isStale(time, now: state.overlaysBuiltAt, staleAfterMs: staleAfter)
                    && RealtimeFreshness.isStale(time, now: now, staleAfterMs: staleAfter)
            }
            return (state.overlaysBuiltAt, Set(lapsed.map(\.feed)))
        }
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
        await boards.publish(snapshot: after, now: now)
    }
}
