import Foundation
import HeraldAuth
import HeraldCore
import Synchronization

/// One client's connection to one namespace: what domain modules join to rooms and emit to.
///
/// Every recoverable event it sends carries an offset as its last argument (Socket.IO 4.6
/// connection state recovery): the sequence numbers last sent in each of the socket's rooms,
/// in join order (`"12.0.7"`). A client that reconnects hands back the last offset it
/// received, which says exactly what it has, room by room, so the replay has no gap even
/// when frames were lost in flight.
public final class SocketIOSocket: RoomFollower {
    public let connectionID: UInt64
    /// The Socket.IO socket id (kept across a recovery).
    public let id: String
    /// The private session id the client presents to recover.
    public let pid: String
    public let namespace: String
    public let identity: Identity?
    /// True when this socket resumed an earlier session (rooms restored, missed events replayed).
    public let recovered: Bool
    public var userID: String? { identity?.userID }

    struct State {
        var tracker = SubscriptionTracker()
        var rooms: [RecoverableSession.Room] = []
        var nextAckID = 0
        var pendingAcks: [Int: CheckedContinuation<[SocketValue]?, Never>] = [:]
        /// Ack ids of broadcast deliveries that asked for an ack, to their hub ack tokens.
        var deliveryAcks: [Int: AckToken] = [:]
        var connected = true
    }

    private let state = Mutex(State())
    let session: EngineSession
    /// The session's outbound queue, held here too: a broadcast reaches it without a stop at
    /// the session object (one memory access fewer per member).
    private let queue: OutboundQueue
    let hub: RealtimeHub
    /// Whether events carry recovery offsets (off when recovery is disabled).
    let offsets: Bool
    /// The auth payload of the CONNECT packet (`{}` when none was sent).
    public let handshakeAuth: SocketValue
    /// False when the client said in its handshake that it does not acknowledge deliveries
    /// (`auth: {acks: false}`, or `?acks=false` in the connection's query): see `DeliveryAcks`.
    public let acknowledgesDeliveries: Bool
    /// Where the rooms are written as they change, so the session survives its node (nil when
    /// recovery is off).
    let sessions: RecoverableSessionStore?

    init(
        connectionID: UInt64, id: String, pid: String, namespace: String, identity: Identity?, recovered: Bool,
        session: EngineSession, hub: RealtimeHub, offsets: Bool, auth: SocketValue?, sessions: RecoverableSessionStore? = nil
    ) {
        self.acknowledgesDeliveries = DeliveryAcks.acknowledges(auth: auth, query: session.handshakeQuery)
        self.sessions = sessions
        self.offsets = offsets
        self.handshakeAuth = auth ?? .object([:])
        self.connectionID = connectionID
        self.id = id
        self.pid = pid
        self.namespace = namespace
        self.identity = identity
        self.recovered = recovered
        self.session = session
        self.queue = session.queue
        self.hub = hub
    }

    public var rooms: [String] { state.withLock { $0.rooms.map(\.room) } }
    public var isConnected: Bool { state.withLock { $0.connected } }

    // MARK: Rooms

    /// Joins `room`: the socket receives every event published to it from now on.
    public func join(_ room: String) async throws {
        if state.withLock({ $0.tracker.contains(room) }) { return }
        let base = try await hub.lastSeq(room: room)
        state.withLock { state in
            guard !state.tracker.contains(room) else { return }
            state.tracker.follow(room, after: base)
            state.rooms.append(.init(room: room, base: base))
            persist(state)
        }
        hub.join(self, room: room)
    }

    /// Joins `room` when the server adds this socket's user to it (`RealtimeHub.addUsers`).
    public func follow(_ room: String, after base: Int64) {
        let added = state.withLock { state -> Bool in
            guard state.connected, !state.tracker.contains(room) else { return false }
            state.tracker.follow(room, after: base)
            state.rooms.append(.init(room: room, base: base))
            persist(state)
            return true
        }
        if added { hub.join(self, room: room) }
    }

    public func leave(_ room: String) {
        state.withLock { state in
            state.tracker.leave(room)
            state.rooms.removeAll { $0.room == room }
            persist(state)
        }
        hub.leave(self, room: room)
    }

    /// Writes the live session as it stands now (once connected; in the state's lock, so two
    /// changes reach the store in the order they happened).
    func persist() {
        state.withLock { persist($0) }
    }

    private func persist(_ state: State) {
        guard let sessions, state.connected else { return }
        sessions.markLive(
            RecoverableSession(
                pid: pid, socketID: id, userID: userID, namespace: namespace, rooms: state.rooms,
                disconnectedAt: hub.clock.now().epochMilliseconds))
    }

    /// What a recovery sends: the missed events in order, each framed with the offset the
    /// client holds once it has that event.
    struct Replay: Sendable {
        var frames: [String]
    }

    /// Restores a recovered session's rooms and replays what it missed; nil when any room's
    /// history no longer covers the gap (then nothing is replayed and nothing restored). Live
    /// events stay held until `sendReplayed` has queued the replay.
    func restore(_ saved: [RecoverableSession.Room], offsets: [Int64]) async throws -> Replay? {
        var after: [Int64] = []
        for (index, entry) in saved.enumerated() {
            after.append(index < offsets.count ? max(offsets[index], entry.base) : entry.base)
        }
        state.withLock { state in
            for (index, entry) in saved.enumerated() {
                state.tracker.beginReplay(entry.room, after: after[index])
                state.rooms.append(entry)
            }
        }
        for entry in saved { hub.join(self, room: entry.room) }
        var replays: [[RealtimeEvent]] = []
        for (index, entry) in saved.enumerated() {
            guard case .recovered(let events) = try await hub.replay(room: entry.room, after: after[index]) else {
                for entry in saved { leave(entry.room) }
                return nil
            }
            replays.append(events)
        }
        return state.withLock { state in
            var out: [RealtimeEvent] = []
            for (index, entry) in saved.enumerated() {
                out += state.tracker.drainReplay(entry.room, replayed: replays[index])
            }
            return Replay(frames: replayFrames(Self.inOrder(out), rooms: state.rooms, from: after))
        }
    }

    static func inOrder(_ events: [RealtimeEvent]) -> [RealtimeEvent] {
        events.sorted { ($0.createdAt, $0.seq ?? 0) < ($1.createdAt, $1.seq ?? 0) }
    }

    /// Frames for replayed `events` (in send order), each with its own offset: `positions`
    /// (one per room, in `rooms` order) start where the client was and advance event by
    /// event. Why not one offset for the whole replay: a connection dropped halfway through
    /// would come back claiming the events it never got.
    func replayFrames(_ events: [RealtimeEvent], rooms: [RecoverableSession.Room], from positions: [Int64]) -> [String] {
        var positions = positions
        return events.map { event in
            guard let seq = event.seq, offsets, let index = rooms.firstIndex(where: { $0.room == event.room }), index < positions.count else {
                return Self.frame(for: event, namespace: namespace, offset: nil)
            }
            positions[index] = seq
            let offset = positions.count == 1 ? String(seq) : positions.map(String.init).joined(separator: ".")
            return Self.frame(for: event, namespace: namespace, offset: offset)
        }
    }

    // MARK: Sending

    public func deliver(_ event: RealtimeEvent) {
        deliver(event, sharing: BroadcastFrames())
    }

    public func deliver(_ event: RealtimeEvent, sharing frames: BroadcastFrames) {
        let frame: String? = state.withLock { state in
            guard state.connected, state.tracker.admit(event) == .send else { return nil }
            var ackID: Int?
            if let token = event.ackToken, acknowledgesDeliveries, state.deliveryAcks.count < Self.maxDeliveryAcks {
                ackID = state.nextAckID
                state.nextAckID += 1
                state.deliveryAcks[ackID!] = token
            }
            // An event that asks for an ack carries no offset (the reference server gives it
            // none): Socket.IO clients append the ack callback after the arguments, so an
            // offset before it is never recorded, and the client recovers from an older one.
            let offset = event.seq == nil || !offsets || ackID != nil ? nil : Self.offset(state)
            guard ackID == nil else { return Self.frame(for: event, namespace: namespace, offset: offset, ackID: ackID) }
            // Members in the same namespace at the same offset get the same frame.
            return frames.frame(for: namespace, offset: offset) {
                Self.frame(for: event, namespace: namespace, offset: offset)
            }
        }
        if let frame { send(text: frame) }
    }

    /// Queues a recovery's replay, then the live events held meanwhile, then lets live events
    /// through (a live event queued before the replay would overtake it).
    func sendReplayed(_ replay: Replay) {
        for frame in replay.frames { send(text: frame) }
        while true {
            let frames: [String]? = state.withLock { state in
                let positions = state.rooms.map { state.tracker.lastSeq($0.room) ?? $0.base }
                var held: [RealtimeEvent] = []
                var any = false
                for entry in state.rooms {
                    if let more = state.tracker.endReplay(entry.room) {
                        any = true
                        held += more
                    }
                }
                return any ? replayFrames(Self.inOrder(held), rooms: state.rooms, from: positions) : nil
            }
            guard let frames else { return }
            for frame in frames { send(text: frame) }
        }
    }

    static func offset(_ state: State) -> String {
        if state.rooms.count == 1, let room = state.rooms.first {
            return String(state.tracker.lastSeq(room.room) ?? room.base)
        }
        return state.rooms.map { String(state.tracker.lastSeq($0.room) ?? $0.base) }.joined(separator: ".")
    }

    /// Unanswered delivery acks kept per socket; beyond it events go without an ack id (the
    /// publisher's timeout then decides), so a client that never acks cannot grow memory.
    static let maxDeliveryAcks = 1024

    static func frame(for event: RealtimeEvent, namespace: String, offset: String?, ackID: Int? = nil) -> String {
        var arguments = event.payloadJSON
        if let offset {
            arguments += ","
            arguments += SocketPacketEncoder.jsonString(offset)
        }
        return "4" + SocketPacketEncoder.eventText(namespace: namespace, event: event.name, argumentsJSON: arguments, ackID: ackID)
    }

    private func send(text: String) {
        if !queue.enqueue(.text(text)) {
            // Overflow: the queue closed itself as a slow consumer; the transport ends the session.
            queue.close(.slowConsumer)
        }
    }

    /// Sends `event` with `arguments` to this socket only.
    public func emit(_ event: String, _ arguments: [SocketValue] = []) {
        send(SocketPacket(type: .event, namespace: namespace, data: .array([.string(event)] + arguments)))
    }

    /// Sends `event` and waits for the client's acknowledgement; nil on timeout or disconnect.
    public func emitWithAck(_ event: String, _ arguments: [SocketValue] = [], timeout: Duration) async -> [SocketValue]? {
        let id: Int? = state.withLock { state in
            guard state.connected else { return nil }
            defer { state.nextAckID += 1 }
            return state.nextAckID
        }
        guard let id else { return nil }
        return await withTaskGroup(of: [SocketValue]?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let registered = self.state.withLock { state -> Bool in
                        guard state.connected else { return false }
                        state.pendingAcks[id] = continuation
                        return true
                    }
                    guard registered else {
                        continuation.resume(returning: nil)
                        return
                    }
                    self.send(SocketPacket(type: .event, namespace: self.namespace, id: id, data: .array([.string(event)] + arguments)))
                }
            }
            group.addTask {
                try? await CancellableSleep.sleep(for: timeout)
                self.resolveAck(id, with: nil)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    func resolveAck(_ id: Int, with arguments: [SocketValue]?) {
        let continuation = state.withLock { $0.pendingAcks.removeValue(forKey: id) }
        continuation?.resume(returning: arguments)
    }

    /// A client ACK packet: answers `emitWithAck`, or acknowledges a broadcast delivery.
    func received(ack id: Int, arguments: [SocketValue]) async {
        if let token = state.withLock({ $0.deliveryAcks.removeValue(forKey: id) }) {
            await hub.acknowledge(token)
        } else {
            resolveAck(id, with: arguments)
        }
    }

    func send(_ packet: SocketPacket) {
        let (text, attachments) = SocketPacketEncoder.encode(packet)
        send(text: "4" + text)
        for attachment in attachments {
            if !queue.enqueue(.binary(attachment)) {
                queue.close(.slowConsumer)
                return
            }
        }
    }

    /// Disconnects this namespace from the server side (the client is told).
    public func disconnect() {
        send(SocketPacket(type: .disconnect, namespace: namespace))
        closed()
    }

    /// Stops deliveries, leaves every room and fails pending acks; returns what a recovery
    /// needs: the rooms in join order with the sequence each was joined at. (Not what was last
    /// sent: frames in flight when the connection dropped never arrived, and the client's own
    /// offset says what did.)
    @discardableResult
    func closed() -> [RecoverableSession.Room] {
        let (pending, rooms) = state.withLock { state -> ([CheckedContinuation<[SocketValue]?, Never>], [RecoverableSession.Room]) in
            guard state.connected else { return ([], []) }
            state.connected = false
            let pending = Array(state.pendingAcks.values)
            state.pendingAcks = [:]
            state.deliveryAcks = [:]
            return (pending, state.rooms)
        }
        hub.unregister(self)
        for continuation in pending { continuation.resume(returning: nil) }
        return rooms
    }
}
