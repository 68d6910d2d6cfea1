/// What one connection has been sent, per room: the rule that makes a replay and the live
/// stream meet without a gap or a duplicate.
///
/// A connection joins a room *before* its replay is read, so no live event can slip between
/// the two; live events that arrive during the replay are held, and afterwards only events
/// newer than the last one sent go out.
public struct SubscriptionTracker: Sendable {
    struct Cursor: Sendable {
        var lastSeq: Int64
        var held: [RealtimeEvent]?
    }

    public enum Admission: Sendable, Equatable {
        case send
        case hold
        case drop
    }

    /// The first room followed, kept inline: most connections follow one or two rooms, and a
    /// broadcast then finds its cursor in the connection itself, without a table to hash into
    /// (and an idle connection allocates no table at all).
    private var firstRoom: String?
    private var first = Cursor(lastSeq: 0, held: nil)
    private var others: [String: Cursor] = [:]
    /// Live events held per replaying room; beyond this the connection is too far behind.
    let maxHeld: Int

    public init(maxHeld: Int = 10_000) {
        self.maxHeld = maxHeld
    }

    public var rooms: [String] { (firstRoom.map { [$0] } ?? []) + others.keys }
    public func contains(_ room: String) -> Bool { cursor(room) != nil }
    public func lastSeq(_ room: String) -> Int64? { cursor(room)?.lastSeq }

    private func cursor(_ room: String) -> Cursor? {
        firstRoom == room ? first : others[room]
    }

    private mutating func set(_ room: String, _ cursor: Cursor) {
        if firstRoom == nil || firstRoom == room {
            firstRoom = room
            first = cursor
        } else {
            others[room] = cursor
        }
    }

    /// Runs `body` on `room`'s cursor in place; nil when the room is not followed.
    private mutating func update<Result>(_ room: String, _ body: (inout Cursor) -> Result) -> Result? {
        if firstRoom == room { return body(&first) }
        guard let index = others.index(forKey: room) else { return nil }
        return body(&others.values[index])
    }

    /// Starts following `room` live, taking only events after `seq` (the room's position
    /// when the connection joined; events committed before it belong to the past).
    public mutating func follow(_ room: String, after seq: Int64 = 0) {
        if cursor(room) == nil { set(room, Cursor(lastSeq: seq, held: nil)) }
    }

    /// Starts following `room`, holding live events until the replay ends (`drainReplay`
    /// then `endReplay`, or `finishReplay` in one step).
    public mutating func beginReplay(_ room: String, after seq: Int64) {
        set(room, Cursor(lastSeq: seq, held: []))
    }

    /// Decides what to do with a live event for this connection.
    public mutating func admit(_ event: RealtimeEvent) -> Admission {
        // Changed in place: this runs for every member of every broadcast.
        let maxHeld = self.maxHeld
        return update(event.room) { cursor -> Admission in
            if cursor.held != nil {
                cursor.held!.append(event)
                if cursor.held!.count > maxHeld { cursor.held!.removeFirst() }
                return .hold
            }
            guard let seq = event.seq else { return .send }
            guard seq > cursor.lastSeq else { return .drop }
            cursor.lastSeq = seq
            return .send
        } ?? .drop
    }

    /// Ends the replay of `room`: returns what to send, in order: the replayed events, then
    /// the held live events that are newer. `replayed` nil means the replay was unavailable:
    /// only the held events go out (the client refetches state).
    public mutating func finishReplay(_ room: String, replayed: [RealtimeEvent]?) -> [RealtimeEvent] {
        let out = drainReplay(room, replayed: replayed)
        update(room) { $0.held = nil }
        return out
    }

    /// What a replay has to send so far — the replayed events, then the held live events that
    /// are newer — while live events go on being held: the caller sends these, then calls
    /// `endReplay` until it returns nil, so no live event can overtake the replay on the wire.
    public mutating func drainReplay(_ room: String, replayed: [RealtimeEvent]?) -> [RealtimeEvent] {
        update(room) { cursor in
            var out: [RealtimeEvent] = []
            for event in (replayed ?? []) + (cursor.held ?? []) {
                guard let seq = event.seq else {
                    out.append(event)
                    continue
                }
                if seq > cursor.lastSeq {
                    cursor.lastSeq = seq
                    out.append(event)
                }
            }
            if cursor.held != nil { cursor.held = [] }
            return out
        } ?? []
    }

    /// Ends a drained replay: nil when nothing was held since the last drain (live events go
    /// straight out from now on); otherwise the newly held events to send first (still holding).
    public mutating func endReplay(_ room: String) -> [RealtimeEvent]? {
        let pending =
            update(room) { cursor -> Bool in
                guard let held = cursor.held, !held.isEmpty else {
                    cursor.held = nil
                    return false
                }
                return true
            } ?? false
        return pending ? drainReplay(room, replayed: []) : nil
    }

    public mutating func leave(_ room: String) {
        guard firstRoom == room else {
            others[room] = nil
            return
        }
        if let (next, cursor) = others.first {
            others[next] = nil
            firstRoom = next
            first = cursor
        } else {
            firstRoom = nil
            first = Cursor(lastSeq: 0, held: nil)
        }
    }
}
