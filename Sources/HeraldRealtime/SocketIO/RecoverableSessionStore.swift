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
struct RecoverableSessionStore: Sendable {
    func save(_ session: RecoverableSession, in database: any Database) async throws {
        let rooms = String(decoding: try JSONEncoder().encode(session), as: UTF8.self)
        try await database.withConnection { db in
            try await db.raw(
                """
                INSERT INTO realtime_sessions (pid, user_id, namespace, rooms, updated_at)
                VALUES (\(bind: session.pid), \(bind: session.userID), \(bind: session.namespace), \(bind: rooms), \(bind: session.disconnectedAt))
                ON CONFLICT (pid) DO UPDATE SET user_id = excluded.user_id, namespace = excluded.namespace,
                    rooms = excluded.rooms, updated_at = excluded.updated_at
                """
            ).run()
        }
    }

    /// Takes (reads and deletes) the session `pid` if it belongs to `userID` in `namespace`
    /// and disconnected after `notBefore`. Someone else presenting the pid gets nothing and
    /// leaves the owner's session in place.
    func take(pid: String, userID: String?, namespace: String, notBefore: Int64, in database: any Database) async throws -> RecoverableSession? {
        try await database.withConnection { db in
            guard
                let row = try await db.raw(
                    """
                    DELETE FROM realtime_sessions
                    WHERE pid = \(bind: pid) AND COALESCE(user_id, '') = \(bind: userID ?? "") AND namespace = \(bind: namespace)
                    RETURNING rooms, updated_at
                    """
                ).first()
            else { return nil }
            guard try row.decode(column: "updated_at", as: Int64.self) >= notBefore else { return nil }
            let text = try row.decode(column: "rooms", as: String.self)
            return try? JSONDecoder().decode(RecoverableSession.self, from: Data(text.utf8))
        }
    }

    func purge(before: Int64, in database: any Database) async throws {
        try await database.withConnection { db in
            try await db.raw("DELETE FROM realtime_sessions WHERE updated_at < \(bind: before)").run()
        }
    }
}
