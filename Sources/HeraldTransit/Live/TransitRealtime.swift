import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage
import Logging
import ServiceLifecycle

/// GTFS-Realtime intake: messages posted by a backend and polled from configured URLs.
///
/// Why an owner of its own: a message is checked, stored for every node, laid over its feed
/// here at once and announced; that path (and its counters) is the same for a post and a
/// poll, and nothing else writes the realtime table.
public final class TransitRealtime: Sendable {
    let config: TransitConfig
    let database: any Database
    let clock: any HeraldClock
    let logger: Logger
    let fetcher: FeedFetcher
    let statistics: TransitStatistics
    let served: ServedFeeds
    let announcements: TransitAnnouncements
    let alertIntake: AlertIntake
    let realtimeStore = RealtimeFeedStore()

    init(
        config: TransitConfig, database: any Database, clock: any HeraldClock, logger: Logger, fetcher: FeedFetcher, statistics: TransitStatistics,
        served: ServedFeeds, announcements: TransitAnnouncements, alertIntake: AlertIntake
    ) {
        self.config = config
        self.database = database
        self.clock = clock
        self.logger = logger
        self.fetcher = fetcher
        self.statistics = statistics
        self.served = served
        self.announcements = announcements
        self.alertIntake = alertIntake
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// The source name a posted feed is kept under when the caller names none.
    public static func pushSource(feed: String) -> String { "push-\(feed)" }

    /// Takes in one FeedMessage for `feed`: it must decode (else it is refused, counted, and
    /// the source's last good message keeps serving); it is stored for every node, laid over
    /// the feed here at once and announced.
    @discardableResult
    public func ingest(
        source: String, feed: String, payload: Data, etag: String? = nil, lastModified: String? = nil
    ) async throws -> RealtimeFeed {
        let decoded: RealtimeFeed
        do {
            decoded = try RealtimeFeedDecoder.decode(payload, maxBytes: config.maxRealtimeBytes)
        } catch {
            statistics.rejected(source)
            throw error
        }
        let now = nowMs
        try await database.withConnection { [realtimeStore] db in
            try await realtimeStore.store(
                db, source: source, feed: feed, payload: payload, feedTimestamp: decoded.timestamp, etag: etag, lastModified: lastModified, now: now)
        }
        statistics.accepted(source)
        try await served.gate.run {
            served.update(source: source, ServedFeeds.SourceState(feed: feed, decoded: decoded, receivedAt: now, feedTimestamp: decoded.timestamp))
            await served.rebuildOverlays([feed])
        }
        await announcements.announce(["kind": "realtime", "source": .string(source)])
        alertIntake.signal()
        return decoded
    }

    /// Polls each configured GTFS-Realtime source at its interval.
    public func pollLoops(ready: @escaping @Sendable () async -> Bool) -> [any Service] {
        config.realtime.map { source in
            DuePoller("transit realtime \(source.name)", interval: .seconds(source.pollIntervalSeconds), wake: WakeSignal(), logger: logger, ready: ready) {
                [self] in try await poll(source)
            }
        }
    }

    /// One poll of a configured source, if it is due (exactly one node polls it each interval).
    func poll(_ source: TransitConfig.RealtimeSourceConfig) async throws {
        let now = nowMs
        let claimed = try await database.withConnection { [realtimeStore] db in
            try await realtimeStore.claimPoll(db, source: source.name, now: now, next: now + Int64(source.pollIntervalSeconds) * 1000)
        }
        guard claimed else { return }
        let previous = try await database.withConnection { [realtimeStore] db in try await realtimeStore.find(db, source: source.name) }
        do {
            let outcome = try await fetcher.fetch(
                source.url, etag: previous?.etag, lastModified: previous?.lastModified, headers: source.headers, maxBytes: config.maxRealtimeBytes,
                timeout: .seconds(source.timeoutSeconds))
            switch outcome {
            case .notModified:
                statistics.notModified(source.name)
                try await database.withConnection { [realtimeStore] db in try await realtimeStore.recordPoll(db, source: source.name, error: nil, now: now) }
            case .fetched(let body, let etag, let lastModified):
                do {
                    try await ingest(source: source.name, feed: config.feedName(of: source), payload: body, etag: etag, lastModified: lastModified)
                } catch let error as RealtimeFeedDecoder.DecodeError {
                    logger.warning(
                        "a polled realtime message was refused; the last good one serves", metadata: ["source": "\(source.name)", "error": "\(error)"])
                    try await database.withConnection { [realtimeStore] db in
                        try await realtimeStore.recordPoll(db, source: source.name, error: "refused: \(error)", now: now)
                    }
                }
            }
        } catch let error as FeedFetcher.FetchError {
            statistics.fetchFailed(source.name)
            logger.warning("polling a realtime feed failed", metadata: ["source": "\(source.name)", "error": "\(error)"])
            try await database.withConnection { [realtimeStore] db in
                try await realtimeStore.recordPoll(db, source: source.name, error: error.description, now: now)
            }
        }
    }
}
