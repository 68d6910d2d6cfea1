import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// The event log behind realtime history: per-room sequence numbers and recent events.
///
/// Why a counter row per room: `INSERT … ON CONFLICT DO UPDATE … RETURNING` increments it
/// atomically and holds the row lock until commit, so on PostgreSQL a room's events commit
/// (and are NOTIFYed) in sequence order even when several nodes publish to it.
struct RealtimeEventStore: Sendable {
    init() {}

    /// Appends an event and returns its sequence number. Run inside a transaction.
    func append(_ db: any SQLDatabase, room: String, event: String, payload: String, now: Int64) async throws -> Int64 {
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

    /// Appends many events in a few statements (one counter upsert per 500 rooms, one
    /// insert per 400 events) and returns their sequence numbers in the given order. Run
    /// inside a transaction; give the events in room order so concurrent batches take the
    /// rooms' counter rows in the same order.
    ///
    /// Why: a batch of driver locations touches a thousand trip rooms; two statements per
    /// event would make each commit a thousand round trips.
    func appendBatch(_ db: any SQLDatabase, _ events: [(room: String, event: String, payload: String)], now: Int64) async throws -> [Int64] {
        guard !events.isEmpty else { return [] }
        var counts: [String: Int64] = [:]
        var rooms: [String] = []
        for event in events {
            if counts[event.room] == nil { rooms.append(event.room) }
            counts[event.room, default: 0] += 1
        }
        var next: [String: Int64] = [:]
        for chunk in stride(from: 0, to: rooms.count, by: 500).map({ Array(rooms[$0..<min($0 + 500, rooms.count)]) }) {
            var query = SQLQueryString("INSERT INTO realtime_rooms (room, last_seq) VALUES ")
            for (index, room) in chunk.enumerated() {
                if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation("(\(bind: room), \(bind: counts[room]!))" as SQLQueryString)
            }
            query.appendInterpolation(
                unsafeRaw: " ON CONFLICT (room) DO UPDATE SET last_seq = realtime_rooms.last_seq + excluded.last_seq RETURNING room, last_seq")
            for row in try await db.raw(query).all() {
                let room = try row.decode(column: "room", as: String.self)
                next[room] = try row.decode(column: "last_seq", as: Int64.self) - (counts[room] ?? 1) + 1
            }
        }
        var seqs: [Int64] = []
        seqs.reserveCapacity(events.count)
        for event in events {
            guard let seq = next[event.room] else { throw StoreError.noRowReturned }
            seqs.append(seq)
            next[event.room] = seq + 1
        }
        for start in stride(from: 0, to: events.count, by: 400) {
            let end = min(start + 400, events.count)
            var query = SQLQueryString("INSERT INTO realtime_events (room, seq, event, payload, created_at) VALUES ")
            for index in start..<end {
                if index > start { query.appendInterpolation(unsafeRaw: ", ") }
                let e = events[index]
                query.appendInterpolation("(\(bind: e.room), \(bind: seqs[index]), \(bind: e.event), \(bind: e.payload), \(bind: now))" as SQLQueryString)
            }
            try await db.raw(query).run()
        }
        return seqs
    }

    /// The room's last sequence number (0 when nothing was ever published).
    func lastSeq(_ db: any SQLDatabase, room: String) async throws -> Int64 {
        try await db.raw("SELECT last_seq FROM realtime_rooms WHERE room = \(bind: room)").first()?
            .decode(column: "last_seq", as: Int64.self) ?? 0
    }

    /// Events of `room` after `seq`, oldest first, at most `limit`.
    func events(_ db: any SQLDatabase, room: String, after seq: Int64, limit: Int) async throws -> [StoredRealtimeEvent] {
        try await db.raw(
            """
            SELECT room, seq, event, payload, created_at FROM realtime_events
            WHERE room = \(bind: room) AND seq > \(bind: seq) ORDER BY seq LIMIT \(bind: limit)
            """
        ).all().map(Self.decode)
    }

    func event(_ db: any SQLDatabase, room: String, seq: Int64) async throws -> StoredRealtimeEvent? {
        try await db.raw(
            "SELECT room, seq, event, payload, created_at FROM realtime_events WHERE room = \(bind: room) AND seq = \(bind: seq)"
        ).first().map(Self.decode)
    }

    /// Deletes events older than `before` and, per room, all but the newest `keep`.
    /// Returns how many were deleted.
    @discardableResult
    func trim(_ db: any SQLDatabase, before: Int64, keepPerRoom keep: Int) async throws -> Int {
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
