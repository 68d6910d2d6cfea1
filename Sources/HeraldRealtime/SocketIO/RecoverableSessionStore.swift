import Foundation
import HeraldCore
import HeraldStorage
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

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
///
/// Why live sockets are written too: a node that is killed (or loses its power) saves
/// nothing when it goes, so a session written only at disconnect dies with its node. Each
/// live socket's rooms are written as they change (`markLive`, flushed every quarter second
/// in one statement, by this type's service), under this node's id; a disconnect turns the
/// row into a disconnected one, a deliberate close deletes it. A client presenting the pid of
/// a live row lost its connection (only it holds the pid), so a take accepts it whatever its
/// age; rows of nodes that stopped heartbeating become disconnected ones when a node notices
/// (once a minute) and then last the recovery window like any other.
final class RecoverableSessionStore: Service, Sendable {
    struct TakeRequest: Sendable {
        var pid: String
        var userID: String?
        var namespace: String
        var notBefore: Int64
    }

    /// Live rows waiting for the next flush: the latest state of each pid, and the pids of
    /// sockets closed on purpose whose rows go.
    private struct Pending {
        var live: [String: RecoverableSession] = [:]
        var deletes: Set<String> = []
    }

    /// Deleted rows waiting beyond this many (a database gone for long while clients keep
    /// closing) are dropped: a row left behind is only found by the pid's owner, who forgot it.
    static let maxPendingDeletes = 100_000

    let nodeID: String
    private let database: any Database
    private let saves: GroupCommit<RecoverableSession, Void>
    private let takes: GroupCommit<TakeRequest, RecoverableSession?>
    private let pending = Mutex(Pending())
    private let recoveryWindow: Duration
    private let flushInterval: Duration
    private let expiryInterval: Duration
    /// A node whose heartbeat is older than this is dead (the presence TTL).
    private let nodeTTL: Duration
    private let clock: any HeraldClock
    private let logger: Logger

    init(
        database: any Database, clock: any HeraldClock, nodeID: String, recoveryWindow: Duration = .seconds(120), flushInterval: Duration = .milliseconds(250),
        expiryInterval: Duration = .seconds(60), nodeTTL: Duration = .seconds(15), logger: Logger = Logger(label: "herald.realtime.sessions")
    ) {
        self.database = database
        self.clock = clock
        self.nodeID = nodeID
        self.recoveryWindow = recoveryWindow
        self.flushInterval = flushInterval
        self.expiryInterval = expiryInterval
        self.nodeTTL = nodeTTL
        self.logger = logger
        saves = GroupCommit(maxBatch: 200) { sessions in
            try await Self.save(sessions, in: database, nodeID: nodeID)
            return Array(repeating: (), count: sessions.count)
        }
        takes = GroupCommit(maxBatch: 200) { requests in try await Self.take(requests, in: database) }
    }

    /// Saves a disconnected socket's session (it may come back within the recovery window).
    /// A row another node has taken over since is left alone.
    func save(_ session: RecoverableSession) async throws {
        _ = pending.withLock { $0.live.removeValue(forKey: session.pid) }
        try await saves.submit(session)
    }

    /// Takes (reads and deletes) the session `pid` if it belongs to `userID` in `namespace`
    /// and disconnected after `notBefore` or was live when its connection was lost. Someone
    /// else presenting the pid gets nothing and leaves the owner's session in place.
    func take(pid: String, userID: String?, namespace: String, notBefore: Int64) async throws -> RecoverableSession? {
        try await takes.submit(TakeRequest(pid: pid, userID: userID, namespace: namespace, notBefore: notBefore))
    }

    /// A live socket's rooms changed: written at the next flush.
    func markLive(_ session: RecoverableSession) {
        pending.withLock { pending in
            pending.live[session.pid] = session
            pending.deletes.remove(session.pid)
        }
    }

    /// A socket closed on purpose (the client disconnected): nothing to recover.
    func forget(pid: String) {
        pending.withLock { pending in
            pending.live.removeValue(forKey: pid)
            if pending.deletes.count < Self.maxPendingDeletes { pending.deletes.insert(pid) }
        }
    }

    /// Writes the live rows and deletions gathered since the last flush.
    func flush() async throws {
        let batch = pending.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
        guard !batch.live.isEmpty || !batch.deletes.isEmpty else { return }
        do {
            for chunk in Array(batch.live.values).chunked(200) { try await Self.writeLive(Array(chunk), in: database, nodeID: nodeID) }
            for chunk in Array(batch.deletes).chunked(500) {
                var query = SQLQueryString("DELETE FROM realtime_sessions WHERE node_id = \(bind: nodeID) AND pid IN ")
                query.appendInList(Array(chunk))
                let statement = query
                try await database.withConnection { db in try await db.raw(statement).run() }
            }
        } catch {
            // Put back what nothing newer replaced; the rows' guards keep a late write from
            // undoing a disconnect.
            pending.withLock { pending in
                for (pid, session) in batch.live where pending.live[pid] == nil && !pending.deletes.contains(pid) {
                    pending.live[pid] = session
                }
                for pid in batch.deletes where pending.live[pid] == nil && pending.deletes.count < Self.maxPendingDeletes {
                    pending.deletes.insert(pid)
                }
            }
            throw error
        }
    }

    /// Live rows of nodes that stopped heartbeating become disconnected now; disconnected rows
    /// past the recovery window go. (With SQLite there is one node and no heartbeats: rows of
    /// another node id are an earlier run's.)
    func expire(now: Int64) async throws {
        let fresh = now - nodeTTL.wholeMilliseconds
        let before = now - recoveryWindow.wholeMilliseconds
        let nodeID = self.nodeID
        try await database.withConnection { db in
            try await db.raw(
                """
                UPDATE realtime_sessions SET node_id = NULL, updated_at = \(bind: now)
                WHERE node_id IS NOT NULL AND node_id <> \(bind: nodeID)
                AND node_id NOT IN (SELECT node_id FROM realtime_nodes WHERE heartbeat_at > \(bind: fresh))
                """
            ).run()
            try await db.raw("DELETE FROM realtime_sessions WHERE node_id IS NULL AND updated_at < \(bind: before)").run()
        }
    }

    /// Flushes live rows every quarter second and expires rows once a minute; the last flush
    /// runs on the way out (sockets closed by the shutdown have saved themselves by then).
    func run() async throws {
        let (flushInterval, expiryInterval) = (self.flushInterval, self.expiryInterval)
        await PeriodicLoop.run(
            every: flushInterval, start: .afterInterval, logger: logger, failure: "writing live Socket.IO sessions failed", carrying: Duration.zero
        ) { [self] sinceExpiry in
            try await flush()
            guard sinceExpiry + flushInterval >= expiryInterval else { return sinceExpiry + flushInterval }
            try await expire(now: clock.now().epochMilliseconds)
            return .zero
        }
    }

    /// One multi-row upsert of disconnected sessions; the last save of a pid in the batch
    /// wins. A row live on another node (the client came back there first) is not touched.
    static func save(_ sessions: [RecoverableSession], in database: any Database, nodeID: String) async throws {
        var query = upsert(sessions, liveOn: nil)
        query.appendInterpolation(unsafeRaw: " WHERE realtime_sessions.node_id IS NULL OR realtime_sessions.node_id = ")
        query.appendInterpolation(bind: nodeID)
        let statement = query
        try await database.withConnection { db in try await db.raw(statement).run() }
    }

    /// One multi-row upsert of live sessions held by `nodeID`. A row that is already a
    /// disconnected one stays so: a flush that raced the socket's disconnect must not revive it.
    static func writeLive(_ sessions: [RecoverableSession], in database: any Database, nodeID: String) async throws {
        var query = upsert(sessions, liveOn: nodeID)
        query.appendInterpolation(unsafeRaw: " WHERE realtime_sessions.node_id IS NOT NULL")
        let statement = query
        try await database.withConnection { db in try await db.raw(statement).run() }
    }

    private static func upsert(_ sessions: [RecoverableSession], liveOn nodeID: String?) -> SQLQueryString {
        var latest: [String: RecoverableSession] = [:]
        for session in sessions { latest[session.pid] = session }
        let encoder = JSONEncoder()
        var query = SQLQueryString("INSERT INTO realtime_sessions (pid, user_id, namespace, rooms, updated_at, node_id) VALUES ")
        for (index, session) in latest.values.enumerated() {
            let rooms = (try? encoder.encode(session)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
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
            query.appendInterpolation(unsafeRaw: ", ")
            if let nodeID { query.appendInterpolation(bind: nodeID) } else { query.appendInterpolation(unsafeRaw: "NULL") }
            query.appendInterpolation(unsafeRaw: ")")
        }
        query.appendInterpolation(
            unsafeRaw: """
                 ON CONFLICT (pid) DO UPDATE SET user_id = excluded.user_id, namespace = excluded.namespace,
                    rooms = excluded.rooms, updated_at = excluded.updated_at, node_id = excluded.node_id
                """)
        return query
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
        query.appendInterpolation(unsafeRaw: " RETURNING pid, rooms, updated_at, node_id")
        let statement = query
        let rows = try await database.withConnection { db in try await db.raw(statement).all() }
        var taken: [String: (rooms: String, updatedAt: Int64, live: Bool)] = [:]
        for row in rows {
            taken[try row.decode(column: "pid", as: String.self)] = (
                try row.decode(column: "rooms", as: String.self), try row.decode(column: "updated_at", as: Int64.self),
                try row.decode(column: "node_id", as: String?.self) != nil
            )
        }
        var answered = Set<String>()
        return requests.map { request in
            // A pid asked for twice in one batch is given to the first request only. A live
            // row's socket was lost without a disconnect (its node died): no window applies.
            guard let row = taken[request.pid], answered.insert(request.pid).inserted, row.live || row.updatedAt >= request.notBefore else { return nil }
            return try? JSONDecoder().decode(RecoverableSession.self, from: Data(row.rooms.utf8))
        }
    }
}
