import Foundation
import HeraldCore
import HeraldStorage
import Logging
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// The many-node bus: events are NOTIFYed in the transaction that persists them, and every
/// node LISTENs and delivers to its own members.
///
/// Why this is ordered and gap-free: a room's sequence row is locked until commit and
/// PostgreSQL delivers notifications in commit order, so each room's events arrive in
/// sequence. Payloads too large for NOTIFY (8000 bytes) travel by reference and are read
/// from the events table. The consumer remembers each local room's last delivered sequence;
/// after a reconnect of its LISTEN connection, or on seeing a gap, it reads the missing
/// events from the table before delivering newer ones.
///
/// Why ephemeral events are batched: a notification per event cost PostgreSQL 0.2–0.4 ms of
/// CPU and each listening node 0.3 ms, so one-member rooms (a user's own channel) topped out
/// near 1,000 events a second on two nodes (BENCHMARKS.md, issue 24). Publishes that arrive
/// while a notification is being sent go out together in the next statement, packed into as
/// few notifications as fit (a JSON array of notices), so PostgreSQL relays and each node
/// decodes one notification per batch. A publish still returns once its notice is sent.
public final class PostgresBus: ClusterBus, Service {
    public static let channel = "herald_events"
    /// Largest notification payload sent inline; larger ones go by reference.
    static let inlineLimit = 7000

    private let hub: RealtimeHub
    private let client: PostgresClient
    private let logger: Logger
    public let nodeID: String
    private let lastDelivered = Mutex<[String: Int64]>([:])
    private let listening = Mutex<(ready: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    /// Ephemeral events' notices on their way out, sent in batches (see above).
    private let ephemeral: GroupCommit<String, Void>

    public init(hub: RealtimeHub, client: PostgresClient, nodeID: String, logger: Logger) {
        self.hub = hub
        self.client = client
        self.nodeID = nodeID
        self.logger = logger
        ephemeral = GroupCommit(maxBatch: 1_000) { [hub] notices in
            let payloads = Self.pack(notices)
            try await hub.database.withConnection { db in try await Self.notify(db, payloads) }
            return [Void](repeating: (), count: notices.count)
        }
    }

    // MARK: Publishing

    public func publish(room: String, name: String, payloadJSON: String, persist: Bool, ackToken: AckToken?) async throws -> RealtimeEvent {
        let now = hub.clock.now().epochMilliseconds
        let inline = Self.travelsInline(room: room, name: name, payloadJSON: payloadJSON)
        let store = hub.eventStore
        let tp = HeraldTracing.currentTraceParent()
        if !persist && inline {
            try await ephemeral.submit(
                Self.encode(Notice(r: room, s: nil, e: name, p: payloadJSON, t: now, a: ackToken?.id, ak: ackToken?.kind.rawValue, tp: tp)))
            return RealtimeEvent(room: room, seq: nil, name: name, payloadJSON: payloadJSON, createdAt: now, ackToken: ackToken)
        }
        // Persisted, or too large to travel inline (an ephemeral event then becomes durable).
        let seq = try await hub.database.transaction { db in
            let seq = try await store.append(db, room: room, event: name, payload: payloadJSON, now: now)
            let notice =
                inline
                ? Notice(r: room, s: seq, e: name, p: payloadJSON, t: now, a: ackToken?.id, ak: ackToken?.kind.rawValue, tp: tp)
                : Notice(r: room, s: seq, e: nil, p: nil, t: now, a: ackToken?.id, ak: ackToken?.kind.rawValue, tp: tp)
            try await db.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: Self.encode(notice)))").run()
            return seq
        }
        return RealtimeEvent(room: room, seq: seq, name: name, payloadJSON: payloadJSON, createdAt: now, ackToken: ackToken)
    }

    /// Persisted events (and ephemeral ones too large to travel inline) are stored and
    /// NOTIFYed in one transaction; the ephemeral ones of the batch go in the same statements,
    /// in room order, so a room's events keep the order they were given whatever their kind.
    /// A batch of only ephemeral events needs no transaction: one statement sends it, packed
    /// into as few notifications as fit.
    @discardableResult
    public func publish(batch: [OutgoingEvent]) async throws -> [RealtimeEvent] {
        guard !batch.isEmpty else { return [] }
        let now = hub.clock.now().epochMilliseconds
        let store = hub.eventStore
        let order = batch.roomOrder
        let durable = order.filter { batch[$0].persist || !Self.travelsInline(batch[$0]) }
        let tp = HeraldTracing.currentTraceParent()
        let seqs: [Int64]
        if durable.isEmpty {
            seqs = []
            let payloads = Self.pack(Self.notices(batch, order: order, seqs: [], now: now, tp: tp))
            try await hub.database.withConnection { db in try await Self.notify(db, payloads) }
        } else {
            seqs = try await hub.database.transaction { db in
                let seqs = try await store.appendBatch(db, durable.map { (batch[$0].room, batch[$0].name, batch[$0].payloadJSON) }, now: now)
                try await Self.notify(db, Self.pack(Self.notices(batch, order: order, seqs: seqs, now: now, tp: tp)))
                return seqs
            }
        }
        return batch.events(createdAt: now, durable: durable, seqs: seqs)
    }

    /// The batch's notices in room `order`; the stored events (persisted, or too large to
    /// travel inline) take `seqs` in that order.
    static func notices(_ batch: [OutgoingEvent], order: [Int], seqs: [Int64], now: Int64, tp: String? = nil) -> [String] {
        var notices: [String] = []
        notices.reserveCapacity(order.count)
        var nextSeq = seqs.makeIterator()
        for index in order {
            let event = batch[index]
            let inline = travelsInline(event)
            let seq = event.persist || !inline ? nextSeq.next() : nil
            notices.append(
                encode(
                    inline
                        ? Notice(r: event.room, s: seq, e: event.name, p: event.payloadJSON, t: now, tp: tp)
                        : Notice(r: event.room, s: seq, e: nil, p: nil, t: now, tp: tp)))
        }
        return notices
    }

    static func travelsInline(room: String, name: String, payloadJSON: String) -> Bool {
        payloadJSON.utf8.count + name.utf8.count + room.utf8.count + 64 <= inlineLimit
    }

    static func travelsInline(_ event: OutgoingEvent) -> Bool {
        travelsInline(room: event.room, name: event.name, payloadJSON: event.payloadJSON)
    }

    /// Sends `payloads` as notifications, in order (NOTIFYs reach listeners in the order
    /// sent), 500 to a statement.
    static func notify(_ db: any SQLDatabase, _ payloads: [String]) async throws {
        for start in stride(from: 0, to: payloads.count, by: 500) {
            var query = SQLQueryString("SELECT pg_notify(\(bind: Self.channel), n) FROM (VALUES ")
            for index in start..<min(start + 500, payloads.count) {
                if index > start { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation("(\(bind: payloads[index]), \(bind: Int64(index)))" as SQLQueryString)
            }
            query.appendInterpolation(unsafeRaw: ") AS v(n, i) ORDER BY i")
            _ = try await db.raw(query).all()
        }
    }

    /// Encoded notices packed into as few notification payloads as fit `inlineLimit`: a
    /// payload is one notice (an object) or several (an array of them), in order.
    static func pack(_ notices: [String]) -> [String] {
        var payloads: [String] = []
        var current: [String] = []
        var size = 2
        func flush() {
            guard !current.isEmpty else { return }
            payloads.append(current.count == 1 ? current[0] : "[" + current.joined(separator: ",") + "]")
            current.removeAll(keepingCapacity: true)
            size = 2
        }
        for notice in notices {
            if !current.isEmpty && size + notice.utf8.count + 1 > inlineLimit { flush() }
            current.append(notice)
            size += notice.utf8.count + 1
        }
        flush()
        return payloads
    }

    public func forwardAck(_ token: String) async throws {
        let text = Self.encode(Notice(r: "", s: nil, e: nil, p: nil, t: hub.clock.now().epochMilliseconds, k: token))
        try await hub.database.withConnection { db in
            try await db.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: text))").run()
        }
    }

    // MARK: Consuming

    /// Waits until this node's LISTEN is established (events published before may be
    /// caught up later, but tests and start-up want a live bus).
    public func waitUntilListening() async {
        await withCheckedContinuation { continuation in
            let ready = listening.withLock { state -> Bool in
                if state.ready { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await self.client.withConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            try await self.catchUp()
                            self.markListening(true)
                            for try await notification in notifications {
                                await self.handle(notification.payload)
                            }
                        }
                    }
                }
            } catch is CancellationError {
                break
            } catch {
                markListening(false)
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                logger.warning("realtime LISTEN connection lost; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
                try? await cancelWhenGracefulShutdown { try await CancellableSleep.sleep(for: .milliseconds(500)) }
            }
        }
        markListening(false)
    }

    private func markListening(_ ready: Bool) {
        let waiters = listening.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ready = ready
            guard ready else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func handle(_ payload: String) async {
        // A batch of events is an array of notices (see `pack`).
        guard let notices = Self.decodeNotices(payload) else {
            logger.error("unreadable realtime notification")
            return
        }
        for notice in notices {
            // The publisher's trace continues here, on the nodes that hold the room's sockets
            // (every node hears every notice: the others make no span).
            guard let tp = notice.tp, hub.hasLocalMembers(notice.r) else {
                await handle(notice)
                continue
            }
            await HeraldTracing.withSpan(
                "deliver event", continuing: tp, ofKind: .consumer,
                attributes: ["herald.room": notice.r, "herald.node.id": nodeID]
            ) { span in
                span?.set("herald.event", notice.e)
                await handle(notice)
            }
        }
    }

    private func handle(_ notice: Notice) async {
        if let token = notice.k {
            hub.resolveAckWaiter(token)
            return
        }
        guard let seq = notice.s else {
            if let name = notice.e, let json = notice.p {
                await hub.deliverLocally(
                    RealtimeEvent(room: notice.r, seq: nil, name: name, payloadJSON: json, createdAt: notice.t, ackToken: notice.ackToken))
            }
            return
        }
        do {
            try await deliverInOrder(room: notice.r, upTo: seq, ackToken: notice.ackToken) {
                if let name = notice.e, let json = notice.p {
                    return RealtimeEvent(room: notice.r, seq: seq, name: name, payloadJSON: json, createdAt: notice.t, ackToken: notice.ackToken)
                }
                return nil
            }
        } catch {
            logger.error("reading realtime events failed", metadata: ["room": "\(notice.r)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Delivers the room's events up to `seq`, reading from the table whatever this node has
    /// not delivered yet (a gap, or an event sent by reference).
    private func deliverInOrder(room: String, upTo seq: Int64, ackToken: AckToken?, inline: () -> RealtimeEvent?) async throws {
        guard hub.hasLocalMembersElseForgetHistory(room) else {
            lastDelivered.withLock { $0[room] = nil }
            return
        }
        let last = lastDelivered.withLock { $0[room] } ?? (seq - 1)
        if seq <= last { return }
        var pending: [RealtimeEvent] = []
        if seq > last + 1 || inline() == nil {
            let store = hub.eventStore
            let missing = try await hub.database.withConnection { db in
                try await store.events(db, room: room, after: last, limit: Int(min(seq - last, 10_000)))
            }
            pending = missing.filter { $0.seq <= seq }.map { stored in
                // The notified event itself carries the publisher's ack token; the gap it closes does not.
                stored.seq == seq
                    ? RealtimeEvent(
                        room: stored.room, seq: stored.seq, name: stored.event, payloadJSON: stored.payload,
                        createdAt: stored.createdAt, ackToken: ackToken)
                    : RealtimeEvent(stored: stored)
            }
        } else if let event = inline() {
            pending = [event]
        }
        for event in pending {
            await hub.deliverLocally(event)
        }
        if let newest = pending.last?.seq {
            lastDelivered.withLock { $0[room] = newest }
        }
    }

    /// After (re)connecting: reads what local rooms missed while nobody was listening.
    private func catchUp() async throws {
        let rooms = lastDelivered.withLock { $0 }
        for (room, last) in rooms {
            let store = hub.eventStore
            let missing = try await hub.database.withConnection { db in
                try await store.events(db, room: room, after: last, limit: 10_000)
            }
            guard !missing.isEmpty else { continue }
            for stored in missing { await hub.deliverLocally(RealtimeEvent(stored: stored)) }
            lastDelivered.withLock { $0[room] = missing.last!.seq }
        }
    }
}
