import Foundation
import HeraldCore
import SQLKit

/// One persisted realtime event: the unit of history and replay.
public struct StoredRealtimeEvent: Sendable, Equatable {
    public var room: String
    public var seq: Int64
    public var event: String
    /// The payload as compact JSON text, exactly as delivered.
    public var payload: String
    public var createdAt: Int64

    public init(room: String, seq: Int64, event: String, payload: String, createdAt: Int64) {
        self.room = room
        self.seq = seq
        self.event = event
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// The event log behind realtime history: per-room sequence numbers and recent events.
///
/// Why a counter row per room: `INSERT … ON CONFLICT DO UPDATE … RETURNING` increments it
/// atomically and holds the row lock until commit, so on PostgreSQL a room's events commit
/// (and are NOTIFYed) in sequence order even when several nodes publish to it.
public struct RealtimeEventStore: Sendable {
    public init() {}

    /// Appends an event and returns its sequence number. Run inside a transaction.
    public func append(_ db: any SQLDatabase, room: String, event: String, payload: String, now: Int64) async throws -> Int64 {
        guard
            let row = try await db.raw(
                """
                INSERT INTO realtime_rooms (room, last_seq) VALUES (\(bind: room), 1)
                ON CONFLICT (room) DO UPDATE SET last_seq = realtime_rooms.last_seq + 1
                RETURNING last_seq
                """
            ).first()
        else { throw StoreError.noRowReturned }
        let seq = try row.decode(column: "last_seq", as: Int64.self)
        try await db.raw(
            """
            INSERT INTO realtime_events (room, seq, event, payload, created_at)
            VALUES (\(bind: room), \(bind: seq), \(bind: event), \(bind: payload), \(bind: now))
            """
        ).run()
        return seq
    }

    /// The room's last sequence number (0 when nothing was ever published).
    public func lastSeq(_ db: any SQLDatabase, room: String) async throws -> Int64 {
        try await db.raw("SELECT last_seq FROM realtime_rooms WHERE room = \(bind: room)").first()?
            .decode(column: "last_seq", as: Int64.self) ?? 0
    }

    /// Events of `room` after `seq`, oldest first, at most `limit`.
    public func events(_ db: any SQLDatabase, room: String, after seq: Int64, limit: Int) async throws -> [StoredRealtimeEvent] {
        try await db.raw(
            """
            SELECT room, seq, event, payload, created_at FROM realtime_events
            WHERE room = \(bind: room) AND seq > \(bind: seq) ORDER BY seq LIMIT \(bind: limit)
            """
        ).all().map(Self.decode)
    }

    public func event(_ db: any SQLDatabase, room: String, seq: Int64) async throws -> StoredRealtimeEvent? {
        try await db.raw(
            "SELECT room, seq, event, payload, created_at FROM realtime_events WHERE room = \(bind: room) AND seq = \(bind: seq)"
        ).first().map(Self.decode)
    }

    /// Deletes events older than `before` and, per room, all but the newest `keep`.
    /// Returns how many were deleted.
    @discardableResult
    public func trim(_ db: any SQLDatabase, before: Int64, keepPerRoom keep: Int) async throws -> Int {
        let old = try await db.raw("DELETE FROM realtime_events WHERE created_at < \(bind: before) RETURNING seq").all().count
        let excess = try await db.raw(
            """
            DELETE FROM realtime_events WHERE EXISTS (
                SELECT 1 FROM realtime_rooms r
                WHERE r.room = realtime_events.room AND realtime_events.seq <= r.last_seq - \(bind: keep)
            ) RETURNING seq
            """
        ).all().count
        return old + excess
    }

    static func decode(_ row: any SQLRow) throws -> StoredRealtimeEvent {
        StoredRealtimeEvent(
            room: try row.decode(column: "room", as: String.self),
            seq: try row.decode(column: "seq", as: Int64.self),
            event: try row.decode(column: "event", as: String.self),
            payload: try row.decode(column: "payload", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self)
        )
    }
}

public enum StoreError: Error, Sendable {
    case noRowReturned
}
