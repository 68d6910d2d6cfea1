import HeraldCore
import Logging
import ServiceLifecycle

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

    let feeds: TransitFeeds
    private let stream: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    public init(feeds: TransitFeeds) {
        self.feeds = feeds
        (stream, continuation) = AsyncStream<Job>.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Registers an import (readable at once as `running`) and queues it.
    public func enqueue(feed: String, source: FeedImporter.Source, requestedBy: String?, force: Bool = false) async throws -> ImportRecord {
        let record = try await feeds.importer.begin(feed: feed, source: source, requestedBy: requestedBy)
        continuation.yield(Job(record: record, source: source, force: force))
        return record
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            for await job in stream {
                do {
                    _ = try await feeds.runImport(job.record, source: job.source, force: job.force)
                } catch {
                    feeds.logger.error("import failed", metadata: ["import": "\(job.record.id)", "error": "\(String(reflecting: error))"])
                }
            }
        } onGracefulShutdown: { [continuation] in
            continuation.finish()
        }
    }
}
