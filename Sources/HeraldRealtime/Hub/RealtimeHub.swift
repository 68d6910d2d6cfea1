import Foundation
import HeraldCore
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Rooms, their members on this node, publishing and replay: the one server-side API both
/// realtime protocols and every domain module use.
///
/// Why one hub per node with a bus behind it: `publish` makes the event durable and hands it
/// to the `ClusterBus`, which brings it to the hub of every node (in-process on SQLite,
/// LISTEN/NOTIFY on PostgreSQL); each hub delivers to its local members. Broadcasts run one
/// at a time on a fan-out lane (`FanOutLane`), so a publisher is answered without waiting for
/// a 10,000-member fan-out; each copies the member list under the lock and enqueues outside
/// it, so a large room never holds the lock for long and a slow member never delays the others.
public final class RealtimeHub: Sendable {
    struct State {
        var rooms: [String: [UInt64: any RealtimeSubscriber]] = [:]
        var memberships: [UInt64: Set<String>] = [:]
        var userConnections: [String: Int] = [:]
        /// Registered subscribers that are not clients' connections (the trip tracker).
        var serverSubscribers = 0
    }

    private let state = Mutex(State())
    public let database: any Database
    public let clock: any HeraldClock
    let logger: Logger
    let eventStore = RealtimeEventStore()
    /// Recent persisted events per room, so most replays need no database read.
    let history = Mutex(RoomHistory())
    private let busBox = Mutex<(any ClusterBus)?>(nil)
    private let presenceObservers = Mutex<[@Sendable (String, Bool) -> Void]>([])
    /// Who records each kind of acknowledgement (`onAcknowledge`).
    let ackObservers = Mutex<[AckToken.Kind: @Sendable (String) async -> Void]>([:])
    /// Publishers on this node waiting for their event's first acknowledgement, by ack id.
    let ackWaiters = Mutex<[String: CheckedContinuation<Bool, Never>]>([:])
    /// Events waiting for their fan-out beyond which publishers wait.
    public static let fanOutLimit = 64
    /// Broadcasts in order, off the publisher's path.
    private let lane = FanOutLane(limit: fanOutLimit)

    /// The most events one replay returns; a longer gap is answered `unavailable`.
    public let maxReplay: Int
    public let counters = RealtimeCounters()

    /// Opens when the schema is in place; the realtime services that touch tables wait for it.
    let schemaReady: StartupGate

    /// - Parameter schemaReady: the application's gate, opened after the migrations (an open
    ///   one where the schema is already in place).
    public init(
        database: any Database, clock: any HeraldClock, logger: Logger, maxReplay: Int = 1000, schemaReady: StartupGate = StartupGate(open: true)
    ) {
        self.schemaReady = schemaReady
        self.database = database
        self.clock = clock
        self.logger = logger
        self.maxReplay = maxReplay
    }

    /// Calls `observer(user, online)` when a user's first connection on this node opens or
    /// their last one closes.
    public func onPresenceChange(_ observer: @escaping @Sendable (String, Bool) -> Void) {
        presenceObservers.withLock { $0.append(observer) }
    }

    private func presenceChanges(_ user: String, _ online: Bool) {
        for observer in presenceObservers.withLock({ $0 }) { observer(user, online) }
    }

    /// Connects the hub to its bus (set once at start-up; the bus needs the hub to deliver).
    public func attach(bus: any ClusterBus) {
        busBox.withLock { $0 = bus }
    }

    var bus: any ClusterBus {
        guard let bus = busBox.withLock({ $0 }) else { preconditionFailure("RealtimeHub used before attach(bus:)") }
        return bus
    }

    // MARK: Membership

    /// Registers a connection (for presence) without joining any room.
    public func register(_ subscriber: any RealtimeSubscriber) {
        let cameOnline: String? = state.withLock { state in
            guard state.memberships[subscriber.connectionID] == nil else { return nil }
            state.memberships[subscriber.connectionID] = []
            if !subscriber.isClientConnection { state.serverSubscribers += 1 }
            guard let user = subscriber.userID else { return nil }
            state.userConnections[user, default: 0] += 1
            return state.userConnections[user] == 1 ? user : nil
        }
        if let cameOnline { presenceChanges(cameOnline, true) }
    }

    /// Removes a connection from every room.
    public func unregister(_ subscriber: any RealtimeSubscriber) {
        let wentOffline: String? = state.withLock { state in
            guard let rooms = state.memberships.removeValue(forKey: subscriber.connectionID) else { return nil }
            if !subscriber.isClientConnection { state.serverSubscribers -= 1 }
            for room in rooms {
                state.rooms[room]?[subscriber.connectionID] = nil
                if state.rooms[room]?.isEmpty == true { state.rooms[room] = nil }
            }
            guard let user = subscriber.userID, let count = state.userConnections[user] else { return nil }
            if count <= 1 {
                state.userConnections[user] = nil
                return user
            }
            state.userConnections[user] = count - 1
            return nil
        }
        if let wentOffline { presenceChanges(wentOffline, false) }
    }

    public func join(_ subscriber: any RealtimeSubscriber, room: String) {
        register(subscriber)
        state.withLock { state in
            state.rooms[room, default: [:]][subscriber.connectionID] = subscriber
            state.memberships[subscriber.connectionID, default: []].insert(room)
        }
    }

    public func leave(_ subscriber: any RealtimeSubscriber, room: String) {
        state.withLock { state in
            state.rooms[room]?[subscriber.connectionID] = nil
            if state.rooms[room]?.isEmpty == true { state.rooms[room] = nil }
            state.memberships[subscriber.connectionID]?.remove(room)
        }
    }

    public func memberCount(_ room: String) -> Int {
        state.withLock { $0.rooms[room]?.count ?? 0 }
    }

    public func hasLocalMembers(_ room: String) -> Bool {
        state.withLock { $0.rooms[room] != nil }
    }

    /// For the cluster bus, which skips the events of rooms nobody here is in: whether the
    /// room has local members, and if not, the room's recent history is dropped in the same
    /// critical section, so a socket joining right after cannot be answered from a run that
    /// misses the skipped event.
    func hasLocalMembersElseForgetHistory(_ room: String) -> Bool {
        state.withLock { state in
            if state.rooms[room] != nil { return true }
            history.withLock { $0.forget(room) }
            return false
        }
    }

    /// Records a database read of the room's last sequence in the recent history, only while
    /// the room has local members (then the bus delivers every later event here; see
    /// `hasLocalMembersElseForgetHistory`).
    private func noteLast(_ room: String, _ seq: Int64) {
        state.withLock { state in
            guard state.rooms[room] != nil else { return }
            history.withLock { $0.noteLast(room, seq) }
        }
    }

    /// How many rooms named `prefix…` connections of `userID` on this node follow, `room`
    /// aside: what a per-user limit on a kind of channel counts.
    public func localRoomCount(ofUser userID: String, prefix: String, besides room: String) -> Int {
        state.withLock { state in
            state.rooms.reduce(0) { count, entry in
                guard entry.key != room, entry.key.hasPrefix(prefix), entry.value.values.contains(where: { $0.userID == userID }) else { return count }
                return count + 1
            }
        }
    }

    /// Rooms with at least one member on this node.
    public var localRooms: [String] { state.withLock { Array($0.rooms.keys) } }

    /// Clients' connections registered on this node (server-side followers not counted).
    public var connectionCount: Int { state.withLock { $0.memberships.count - $0.serverSubscribers } }

    /// Whether the user has a connection on this node.
    public func isConnectedHere(_ userID: String) -> Bool {
        state.withLock { ($0.userConnections[userID] ?? 0) > 0 }
    }

    public var connectedUsers: [String: Int] { state.withLock { $0.userConnections } }

    // MARK: Publishing

    /// Publishes `name` with `payload` to `room` on every node.
    ///
    /// A persisted event gets the room's next sequence number and is kept for replay; an
    /// ephemeral one (`persist: false`, e.g. a high-rate location) is only delivered.
    ///
    /// With an `ackToken`, each receiving client is asked to acknowledge the delivery and the
    /// first ack reaches `acknowledge(_:)` (and the observer of the token's kind) on the node
    /// holding that client. Such an event is never kept for replay (as the reference
    /// Socket.IO server never stores an ack-carrying packet): its ack decides its fate — a
    /// notification nobody acknowledged falls back to push and waits in the inbox — so a
    /// replay after a reconnect would only deliver it a second time.
    @discardableResult
    public func publish(
        _ name: String, payload: JSONValue, to room: String, persist: Bool = true, ackToken: AckToken? = nil
    ) async throws -> RealtimeEvent {
        try await bus.publish(
            room: room, name: name, payloadJSON: SocketPacketEncoder.json(payload), persist: persist && ackToken == nil, ackToken: ackToken)
    }

    /// Publishes many persisted events in one transaction (see `ClusterBus.publish(batch:)`).
    public func publish(batch events: [(name: String, payload: JSONValue, room: String)]) async throws {
        guard !events.isEmpty else { return }
        try await bus.publish(batch: events.map { OutgoingEvent(room: $0.room, name: $0.name, payloadJSON: SocketPacketEncoder.json($0.payload)) })
    }

    /// Publishes what a backend sent (see `publish(_:payload:to:persist:ackToken:)`).
    public func publish(_ publication: Publication) async throws -> RealtimeEvent {
        try await bus.publish(
            room: publication.room, name: publication.event, payloadJSON: publication.payloadJSON, persist: publication.persist, ackToken: nil)
    }

    /// Publishes a backend's batch: persisted events in one transaction, ephemeral ones in the
    /// same statements (see `ClusterBus.publish(batch:)`); the events in the order given.
    public func publish(_ publications: [Publication]) async throws -> [RealtimeEvent] {
        try await bus.publish(
            batch: publications.map { OutgoingEvent(room: $0.room, name: $0.event, payloadJSON: $0.payloadJSON, persist: $0.persist) })
    }

    // MARK: Server-managed membership

    /// The pseudo-room of membership commands; every node's hub acts on them, no client sees them.
    static let controlRoom = "$control"

    /// Puts every Socket.IO socket of `users`, on every node, into `room` from its current
    /// position on (a customer's open sockets join the job they just booked). Sockets that
    /// connect later join on connect (domain modules' `onConnect`).
    ///
    /// Why through the bus: the user's sockets may be on any node. The command is ordered
    /// with the room's events, so a socket is in the room before anything published after
    /// this call returns.
    public func addUsers(_ users: [String], to room: String) async throws {
        guard !users.isEmpty else { return }
        let base = try await lastSeq(room: room)
        // NOTIFY payloads are bounded: a few hundred users per command.
        for chunk in stride(from: 0, to: users.count, by: 150).map({ Array(users[$0..<min($0 + 150, users.count)]) }) {
            let command: JSONValue = ["room": .string(room), "base": .number(Double(base)), "users": .array(chunk.map(JSONValue.string))]
            try await publish("join", payload: command, to: Self.controlRoom, persist: false)
        }
    }

    private func applyControl(_ event: RealtimeEvent) {
        guard event.name == "join",
            let command = try? JSONDecoder().decode(JSONValue.self, from: Data(event.payloadJSON.utf8)),
            let room = command["room"]?.stringValue, case .array(let users)? = command["users"]
        else { return }
        let base = Int64(command["base"]?.doubleValue ?? 0)
        let followers: [any RoomFollower] = state.withLock { state in
            users.compactMap(\.stringValue).flatMap { user in
                (state.rooms[RoomName.user(user)] ?? [:]).values.compactMap { $0 as? any RoomFollower }
            }
        }
        for follower in followers { follower.follow(room, after: base) }
    }

    /// Called by the bus for every event that reaches this node, in room order: the event
    /// joins the fan-out lane, and this returns without waiting for the fan-out (unless the
    /// lane is full).
    ///
    /// A membership command (`addUsers`) is applied here, at once, not on the lane: the bus
    /// asks `hasLocalMembersElseForgetHistory` for the very next event (often the room's first,
    /// published right after the join), and a join still queued on a busy lane made it skip
    /// that event (a rider's Socket.IO socket on another node missed `trip_state_changed`).
    /// Events of the room already on the lane are older than the join's base and dropped by
    /// the socket's tracker, as before.
    public func deliverLocally(_ event: RealtimeEvent) async {
        if event.room == Self.controlRoom {
            applyControl(event)
            return
        }
        await lane.post(event) { [self] in await fanOut($0) }
    }

    /// Events waiting for their fan-out on this node: above a few, the node is behind.
    public var pendingFanOuts: Int { lane.pending }

    /// Returns once every event handed to `deliverLocally` so far is in its members' queues.
    public func localDeliveriesSettled() async {
        await lane.idle()
    }

    /// Members served between two yields of a fan-out.
    static let fanOutSlice = 256

    /// Delivers `event` to this node's members of its room (on the lane, one event at a
    /// time). It yields every `fanOutSlice` members: a room of 10,000 is milliseconds of
    /// work, and the tasks waiting for the same threads (request handlers among them) get
    /// their turn in between instead of after the whole broadcast.
    private func fanOut(_ event: RealtimeEvent) async {
        if event.seq != nil { history.withLock { $0.append(event) } }
        let members: [any RealtimeSubscriber] = state.withLock { state in
            guard let room = state.rooms[event.room] else { return [] }
            return Array(room.values)
        }
        let frames = BroadcastFrames()
        var handedToANonAcker = false
        for (index, member) in members.enumerated() {
            member.deliver(event, sharing: frames)
            if event.ackToken != nil && !member.acknowledgesDeliveries { handedToANonAcker = true }
            if index % Self.fanOutSlice == Self.fanOutSlice - 1 { await Task.yield() }
        }
        if !members.isEmpty { counters.add(.deliveries, members.count) }
        // A client that said it never acknowledges (the notification design's apps) has the delivery once it
        // is emitted to it: acknowledged here on its behalf, so no push follows while its app is open.
        if handedToANonAcker, let token = event.ackToken { await acknowledge(token) }
    }

    // MARK: Replay

    /// What a client that last saw `seq` in `room` missed.
    public func replay(room: String, after seq: Int64) async throws -> ReplayResult {
        let result = try await readReplay(room: room, after: seq)
        counters.add(result == .unavailable ? .replaysUnavailable : .replays)
        return result
    }

    private func readReplay(room: String, after seq: Int64) async throws -> ReplayResult {
        let limit = maxReplay
        if let recent = history.withLock({ $0.replay(room, after: seq) }) {
            return recent.count <= limit ? .recovered(recent) : .unavailable
        }
        let eventStore = self.eventStore
        return try await database.withConnection { [self] db in
            let last = try await eventStore.lastSeq(db, room: room)
            self.noteLast(room, last)
            if seq == last { return .recovered([]) }
            if seq > last { return .unavailable }
            // Events committed after `last` was read belong to the live stream (the caller joined
            // the room before asking), so they are left out rather than making the answer fail.
            let stored = try await eventStore.events(db, room: room, after: seq, limit: limit + 1).filter { $0.seq <= last }
            // Complete only if the first kept event is the very next one and nothing was cut off.
            guard let first = stored.first, first.seq == seq + 1, stored.count <= limit, stored.last?.seq == last else {
                return .unavailable
            }
            return .recovered(stored.map(RealtimeEvent.init(stored:)))
        }
    }

    /// The room's latest sequence number (0 before its first persisted event).
    public func lastSeq(room: String) async throws -> Int64 {
        let eventStore = self.eventStore
        let last = try await database.withConnection { db in try await eventStore.lastSeq(db, room: room) }
        noteLast(room, last)
        return last
    }
}

extension RealtimeEvent {
    init(stored: StoredRealtimeEvent) {
        self.init(room: stored.room, seq: stored.seq, name: stored.event, payloadJSON: stored.payload, createdAt: stored.createdAt)
    }
}
