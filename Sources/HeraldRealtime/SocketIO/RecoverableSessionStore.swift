import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// A disconnected Socket.IO socket that may come back: its ids, user and rooms in join order.
struct RecoverableSession: Codable, Sendable, Equatable {
    struct Room: Codable, Sendable, Equatable {
        var room: String
        /// The room's sequence when the socket joined: events after it were meant for the socket.
        var base: Int64
    }

    var pid: String
    var socketID: String
    var userID: String?
    var namespace: String
    var rooms: [Room]
    var disconnectedAt: Int64
}

/// Keeps recoverable sessions in the database, so a client reconnecting to another node (or
/// to this one after a restart) recovers too.
///
/// Why batched: clients come and go in bursts (a deploy, a cell tower, a load balancer
/// draining), and one statement per session through the database's single writer took
/// seconds for a few thousand. Saves and takes that arrive together share one statement.
final class RecoverableSessionStore: Sendable {
    struct TakeRequest: Sendable {
        var pid: String
        var userID: String?
        var namespace: String
        var notBefore: Int64
    }

    private let saves: GroupCommit<RecoverableSession, Void>
    private let takes: GroupCommit<TakeRequest, RecoverableSession?>

    init(database: any Database) {
        saves = GroupCommit(maxBatch: 200) { sessions in
            try await Self.save(sessions, in: database)
            return Array(repeating: (), count: sessions.count)
        }
        takes = GroupCommit(maxBatch: 200) { requests in try await Self.take(requests, in: database) }
    }

    func save(_ session: RecoverableSession) async throws {
        try await saves.submit(session)
    }

    /// Takes (reads and deletes) the session `pid` if it belongs to `userID` in `namespace`
    /// and disconnected after `notBefore`. Someone else presenting the pid gets nothing and
    /// leaves the owner's session in place.
    func take(pid: String, userID: String?, namespace: String, notBefore: Int64) async throws -> RecoverableSession? {
        try await takes.submit(TakeRequest(pid: pid, userID: userID, namespace: namespace, notBefore: notBefore))
    }

    /// One multi-row upsert; the last save of a pid in the batch wins.
    static func save(_ sessions: [RecoverableSession], in database: any Database) async throws {
        var latest: [String: RecoverableSession] = [:]
        for session in sessions { latest[session.pid] = session }
        let encoder = JSONEncoder()
        var query = SQLQueryString("INSERT INTO realtime_sessions (pid, user_id, namespace, rooms, updated_at) VALUES ")
        for (index, session) in latest.values.enumerated() {
            let rooms = String(decoding: try encoder.encode(session), as: UTF8.self)
            if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
            query.appendInterpolation(unsafeRaw: "(")
            query.appendInterpolation(bind: session.pid)
            query.appendInterpolation(unsafeRaw: ", ")
            query.appendInterpolation(bind: session.userID)
            query.appendInterpolation(unsafeRaw: ", ")
            query.appendInterpolation(bind: session.namespace)
            query.appendInterpolation(unsafeRaw: ", ")
            query.appendInterpolation(bind: rooms)
            query.appendInterpolation(unsafeRaw: ", ")
            query.appendInterpolation(bind: session.disconnectedAt)
            query.appendInterpolation(unsafeRaw: ")")
        }
        query.appendInterpolation(
            unsafeRaw: """
                 ON CONFLICT (pid) DO UPDATE SET user_id = excluded.user_id, namespace = excluded.namespace,
                    rooms = excluded.rooms, updated_at = excluded.updated_at
                """)
        let statement = query
        try await database.withConnection { db in try await db.raw(statement).run() }
    }

    /// One DELETE … RETURNING for the batch; each row is deleted only when its pid, owner and
    /// namespace all match one request.
    static func take(_ requests: [TakeRequest], in database: any Database) async throws -> [RecoverableSession?] {
        var query = SQLQueryString("DELETE FROM realtime_sessions WHERE ")
        for (index, request) in requests.enumerated() {
            if index > 0 { query.appendInterpolation(unsafeRaw: " OR ") }
            query.appendInterpolation(unsafeRaw: "(pid = ")
            query.appendInterpolation(bind: request.pid)
            query.appendInterpolation(unsafeRaw: " AND COALESCE(user_id, '') = ")
            query.appendInterpolation(bind: request.userID ?? "")
            query.appendInterpolation(unsafeRaw: " AND namespace = ")
            query.appendInterpolation(bind: request.namespace)
            query.appendInterpolation(unsafeRaw: ")")
        }
        query.appendInterpolation(unsafeRaw: " RETURNING pid, rooms, updated_at")
        let statement = query
        let rows = try await database.withConnection { db in try await db.raw(statement).all() }
        var taken: [String: (rooms: String, updatedAt: Int64)] = [:]
        for row in rows {
            taken[try row.decode(column: "pid", as: String.self)] =
                (try row.decode(column: "rooms", as: String.self), try row.decode(column: "updated_at", as: Int64.self))
        }
        var answered = Set<String>()
        return requests.map { request in
            // A pid asked for twice in one batch is given to the first request only.
            guard let row = taken[request.pid], answered.insert(request.pid).inserted, row.updatedAt >= request.notBefore else { return nil }
            return try? JSONDecoder().decode(RecoverableSession.self, from: Data(row.rooms.utf8))
        }
    }
}
