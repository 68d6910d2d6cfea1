import Foundation
import HeraldCore
import HeraldStorage
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// Whether users are online on any node.
///
/// Why a table plus heartbeats: each node writes which users it holds and refreshes its own
/// heartbeat every few seconds; a user is online when some node with a fresh heartbeat holds
/// them. A node that dies stops heartbeating, so its users drop out after the TTL without
/// anyone having to notice the crash, and the next sweep deletes its rows. On SQLite there is
/// one node and the hub's own counts answer.
public final class PresenceService: Service, Sendable {
    public let nodeID: String
    let hub: RealtimeHub
    let interval: Duration
    let ttlMilliseconds: Int64
    let logger: Logger
    private let written = Mutex<[String: Int]>([:])
    private let dirty = Atomic<Bool>(false)
    private let distributed: Bool

    public init(hub: RealtimeHub, nodeID: String, interval: Duration = .seconds(5), ttl: Duration = .seconds(15), logger: Logger) {
        self.hub = hub
        self.nodeID = nodeID
        self.interval = interval
        self.ttlMilliseconds = ttl.components.seconds * 1000 + ttl.components.attoseconds / 1_000_000_000_000_000
        self.logger = logger
        distributed = hub.database.engine == .postgres
    }

    /// True when the user has a connection on this node or, with PostgreSQL, on any live node.
    public func isOnline(_ userID: String) async throws -> Bool {
        if hub.isConnectedHere(userID) { return true }
        guard distributed else { return false }
        let freshAfter = hub.clock.now().epochMilliseconds - ttlMilliseconds
        return try await hub.database.withConnection { db in
            try await db.raw(
                """
                SELECT 1 AS online FROM realtime_presence p JOIN realtime_nodes n ON n.node_id = p.node_id
                WHERE p.user_id = \(bind: userID) AND n.heartbeat_at > \(bind: freshAfter) LIMIT 1
                """
            ).first() != nil
        }
    }

    /// Which of `userIDs` are online here or, with PostgreSQL, on any live node (one query per
    /// 500 users, for sends to many users).
    public func onlineUsers(_ userIDs: [String], _ db: (any SQLDatabase)? = nil) async throws -> Set<String> {
        var online = Set(userIDs.filter { hub.isConnectedHere($0) })
        guard distributed else { return online }
        let remaining = userIDs.filter { !online.contains($0) }
        let freshAfter = hub.clock.now().epochMilliseconds - ttlMilliseconds
        for chunk in remaining.chunked(500) {
            var query = SQLQueryString(
                """
                SELECT DISTINCT p.user_id FROM realtime_presence p JOIN realtime_nodes n ON n.node_id = p.node_id
                WHERE n.heartbeat_at > \(bind: freshAfter) AND p.user_id IN
                """)
            query.appendInList(Array(chunk))
            let statement = query
            let rows =
                if let db { try await db.raw(statement).all() } else { try await hub.database.withConnection { db in try await db.raw(statement).all() } }
            for row in rows { online.insert(try row.decode(column: "user_id", as: String.self)) }
        }
        return online
    }

    /// Connected users' connections on each live node (this node's from memory; with
    /// PostgreSQL the others' as they last wrote them), for the operations console.
    public func connectionsPerNode() async throws -> [String: Int] {
        var nodes = [nodeID: hub.connectedUsers.values.reduce(0, +)]
        guard distributed else { return nodes }
        let freshAfter = hub.clock.now().epochMilliseconds - ttlMilliseconds
        let rows = try await hub.database.withConnection { db in
            try await db.raw(
                """
                SELECT n.node_id, COALESCE(SUM(p.connections), 0) AS connections FROM realtime_nodes n
                LEFT JOIN realtime_presence p ON p.node_id = n.node_id WHERE n.heartbeat_at > \(bind: freshAfter) GROUP BY n.node_id
                """
            ).all()
        }
        for row in rows {
            let node = try row.decode(column: "node_id", as: String.self)
            if node != nodeID { nodes[node] = try row.decode(column: "connections", as: Int.self) }
        }
        return nodes
    }

    /// Writes this node's users and heartbeat now (also done every `interval`), and publishes
    /// `presence` events (`{user_id, online}`, to room `presence:{user}`) for users who came or
    /// went on this node since the last sync.
    public func sync() async throws {
        let now = hub.clock.now().epochMilliseconds
        let current = hub.connectedUsers
        let previous = written.withLock { $0 }
        var changes: [(user: String, online: Bool)] = []
        for user in current.keys where previous[user] == nil { changes.append((user, true)) }
        for user in previous.keys where current[user] == nil { changes.append((user, false)) }
        try await publishChanges(changes)
        guard distributed else {
            written.withLock { $0 = current }
            return
        }
        let nodeID = self.nodeID
        let ttl = ttlMilliseconds
        var changedCounts = BulkRows(table: "realtime_presence", columns: ["node_id", "user_id", "connections"])
        for (user, count) in current where previous[user] != count { changedCounts.append(.text(nodeID), .text(user), .integer(count)) }
        let counts = changedCounts
        let gone = changes.filter { !$0.online }.map(\.user)
        try await hub.database.transaction { db in
            try await db.raw(
                """
                INSERT INTO realtime_nodes (node_id, heartbeat_at) VALUES (\(bind: nodeID), \(bind: now))
                ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """
            ).run()
            try await db.insertRows(counts, onConflict: "ON CONFLICT (node_id, user_id) DO UPDATE SET connections = excluded.connections")
            for chunk in gone.chunked(Self.rowsPerStatement) {
                var query = SQLQueryString("DELETE FROM realtime_presence WHERE node_id = \(bind: nodeID) AND user_id IN ")
                query.appendInList(Array(chunk))
                try await db.raw(query).run()
            }
            // Rows of nodes that stopped heartbeating long ago are garbage.
            let dead = now - ttl * 4
            try await db.raw("DELETE FROM realtime_presence WHERE node_id IN (SELECT node_id FROM realtime_nodes WHERE heartbeat_at < \(bind: dead))").run()
            try await db.raw("DELETE FROM realtime_nodes WHERE heartbeat_at < \(bind: dead)").run()
        }
        written.withLock { $0 = current }
    }

    /// Rows deleted by one statement (PostgreSQL allows 65,535 parameters).
    static let rowsPerStatement = 500

    /// Presence events at most this many at once.
    static let publishesInFlight = 64

    /// Publishes `presence` events for users who came or went, several at once: a sync after a
    /// wave of reconnects has hundreds, and one at a time each waited for its own
    /// notification, while published together they share them (`PostgresBus` batches).
    private func publishChanges(_ changes: [(user: String, online: Bool)]) async throws {
        let hub = self.hub
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, change) in changes.enumerated() {
                if index >= Self.publishesInFlight { try await group.next() }
                group.addTask {
                    try await hub.publish(
                        "presence", payload: ["user_id": .string(change.user), "online": .bool(change.online)], to: "presence:\(change.user)", persist: false)
                }
            }
            try await group.waitForAll()
        }
    }

    /// A user came or went on this node: write it soon (within a quarter second), not at the
    /// next heartbeat.
    public func changed() {
        dirty.store(true, ordering: .relaxed)
    }

    public func run() async throws {
        guard await hub.schemaReady.wait() else { return }
        // Every quarter second: a sync when users came or went, else one per interval (the
        // heartbeat). A failed sync waits for the next interval rather than the next tick.
        let tick: Duration = .milliseconds(250)
        await PeriodicLoop.run(
            every: tick, start: .immediately, logger: logger, failure: "presence sync failed", carrying: interval
        ) { [self] sinceSync in
            guard sinceSync >= interval || dirty.exchange(false, ordering: .relaxed) else { return sinceSync + tick }
            do {
                try await sync()
            } catch let error where !(error is CancellationError) {
                logger.warning("presence sync failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            return tick
        }
        // Leaving: this node's users are no longer online here. Bounded, so a database that
        // is already gone cannot hold up the shutdown.
        guard distributed else { return }
        let nodeID = self.nodeID
        let database = hub.database
        _ = try? await withDeadline(.seconds(2)) {
            try await database.withConnection { db in
                try await db.raw("DELETE FROM realtime_presence WHERE node_id = \(bind: nodeID)").run()
                try await db.raw("DELETE FROM realtime_nodes WHERE node_id = \(bind: nodeID)").run()
            }
        }
    }
}
