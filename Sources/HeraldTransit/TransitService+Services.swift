import HeraldCore
import HeraldGTFS
import Logging
import ServiceLifecycle

/// The long-lived loops of the transit module, each a `Service` in the application's group.
extension TransitService {
    /// Loads the feeds once the schema is ready, then keeps this node current: at every
    /// announcement on `$transit` and at least every `reload_interval_seconds`.
    public func reloadLoop(ready: @escaping @Sendable () async -> Bool) -> any Service {
        DuePoller("transit reload", interval: .seconds(config.reloadIntervalSeconds), wake: follower.wake, logger: logger, ready: ready) { [self] in
            if isStarted {
                try await reload()
            } else {
                try await start()
            }
        }
    }

    /// Checks each configured feed with a URL when it is due (at start, then every refresh interval).
    public func refreshLoop(ready: @escaping @Sendable () async -> Bool) -> (any Service)? {
        let feeds = config.feeds.filter { $0.url != nil }
        guard !feeds.isEmpty else { return nil }
        // Checks are claimed in the database; this only sets how soon after it is due a check runs.
        let interval = max(1, min(30, feeds.map(\.refreshIntervalSeconds).min()! / 2))
        return DuePoller("transit feed refresh", interval: .seconds(interval), wake: WakeSignal(), logger: logger, ready: ready) { [self] in
            for feed in feeds { try await checkFeed(feed) }
        }
    }

    /// Polls each configured GTFS-Realtime source at its interval.
    public func pollLoops(ready: @escaping @Sendable () async -> Bool) -> [any Service] {
        config.realtime.map { source in
            DuePoller("transit realtime \(source.name)", interval: .seconds(source.pollIntervalSeconds), wake: WakeSignal(), logger: logger, ready: ready) {
                [self] in try await poll(source)
            }
        }
    }
}

/// Runs imports started over HTTP one after another, off the request that started them.
///
/// Why a queue in a Service rather than a task per request: an import holds a feed's rows
/// and memory for seconds; one at a time per node is plenty, and a shutdown stops the loop
/// (an import cut off is marked failed at the next start, and its rows are collected).
public final class TransitImportRunner: Service, Sendable {
    struct Job: Sendable {
        let record: ImportRecord
        let source: FeedImporter.Source
        let force: Bool
    }

    let service: TransitService
    private let stream: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    public init(service: TransitService) {
        self.service = service
        (stream, continuation) = AsyncStream<Job>.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Registers an import (readable at once as `running`) and queues it.
    public func enqueue(feed: String, source: FeedImporter.Source, requestedBy: String?, force: Bool = false) async throws -> ImportRecord {
        let record = try await service.importer.begin(feed: feed, source: source, requestedBy: requestedBy)
        continuation.yield(Job(record: record, source: source, force: force))
        return record
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            for await job in stream {
                do {
                    _ = try await service.runImport(job.record, source: job.source, force: job.force)
                } catch {
                    service.logger.error("import failed", metadata: ["import": "\(job.record.id)", "error": "\(String(reflecting: error))"])
                }
            }
        } onGracefulShutdown: { [continuation] in
            continuation.finish()
        }
    }
}
