import Foundation
import HeraldGTFS
import HeraldStorage
import SQLKit

/// The latest good GTFS-Realtime message of a source: one row of `transit_realtime_feeds`.
public struct RealtimeSourceRecord: Sendable, Equatable, Codable {
    public var source: String
    /// The static feed the messages describe.
    public var feedName: String
    public var payload: Data?
    public var feedTimestamp: Int64?
    public var receivedAt: Int64?
    public var etag: String?
    public var lastModified: String?
    public var nextPollAt: Int64
    public var lastError: String?
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case source, payload, etag
        case feedName = "feed_name"
        case feedTimestamp = "feed_timestamp"
        case receivedAt = "received_at"
        case lastModified = "last_modified"
        case nextPollAt = "next_poll_at"
        case lastError = "last_error"
        case updatedAt = "updated_at"
    }
}

struct RealtimeFeedStore: Sendable {
    init() {}

    func ensure(_ db: any SQLDatabase, source: String, feed: String, now: Int64) async throws {
        try await db.raw(
            """
            INSERT INTO transit_realtime_feeds (source, feed_name, next_poll_at, updated_at) VALUES (\(bind: source), \(bind: feed), 0, \(bind: now))
            ON CONFLICT (source) DO UPDATE SET feed_name = excluded.feed_name
            """
        ).run()
    }

    func all(_ db: any SQLDatabase) async throws -> [RealtimeSourceRecord] {
        try await db.raw("SELECT * FROM transit_realtime_feeds WHERE payload IS NOT NULL ORDER BY source").all(decoding: RealtimeSourceRecord.self)
    }

    /// Which sources have a message and since when (no payloads: a cheap check for changes).
    func heads(_ db: any SQLDatabase) async throws -> [(source: String, feed: String, receivedAt: Int64?)] {
        try await db.raw("SELECT source, feed_name, received_at FROM transit_realtime_feeds WHERE payload IS NOT NULL ORDER BY source").all().map {
            (
                try $0.decode(column: "source", as: String.self), try $0.decode(column: "feed_name", as: String.self),
                try $0.decode(column: "received_at", as: Int64?.self)
            )
        }
    }

    func find(_ db: any SQLDatabase, source: String) async throws -> RealtimeSourceRecord? {
        try await db.raw("SELECT * FROM transit_realtime_feeds WHERE source = \(bind: source)").first(decoding: RealtimeSourceRecord.self)
    }

    /// Claims the source's poll when it is due: one node polls each source each interval.
    func claimPoll(_ db: any SQLDatabase, source: String, now: Int64, next: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE transit_realtime_feeds SET next_poll_at = \(bind: next), updated_at = \(bind: now)
            WHERE source = \(bind: source) AND next_poll_at <= \(bind: now)
            RETURNING source
            """
        ).first() != nil
    }

    /// Keeps a good message (and the validators it came with).
    func store(
        _ db: any SQLDatabase, source: String, feed: String, payload: Data, feedTimestamp: Int64?, etag: String?, lastModified: String?, now: Int64
    ) async throws {
        try await db.raw(
            """
            INSERT INTO transit_realtime_feeds (source, feed_name, payload, feed_timestamp, received_at, etag, last_modified, next_poll_at, last_error, updated_at)
            VALUES (\(bind: source), \(bind: feed), \(bind: payload), \(bind: feedTimestamp), \(bind: now), \(bind: etag), \(bind: lastModified), 0, NULL,
                \(bind: now))
            ON CONFLICT (source) DO UPDATE SET feed_name = excluded.feed_name, payload = excluded.payload, feed_timestamp = excluded.feed_timestamp,
                received_at = excluded.received_at, etag = excluded.etag, last_modified = excluded.last_modified, last_error = NULL,
                updated_at = excluded.updated_at
            """
        ).run()
    }

    /// A poll that found nothing new (304) or failed: the stored message stays.
    func recordPoll(_ db: any SQLDatabase, source: String, error: String?, now: Int64) async throws {
        try await db.raw("UPDATE transit_realtime_feeds SET last_error = \(bind: error), updated_at = \(bind: now) WHERE source = \(bind: source)").run()
    }
}
