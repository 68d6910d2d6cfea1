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

    private var cursors: [String: Cursor] = [:]
    /// Live events held per replaying room; beyond this the connection is too far behind.
    let maxHeld: Int

    public init(maxHeld: Int = 10_000) {
        self.maxHeld = maxHeld
    }

    public var rooms: [String] { Array(cursors.keys) }
    public func contains(_ room: String) -> Bool { cursors[room] != nil }
    public func lastSeq(_ room: String) -> Int64? { cursors[room]?.lastSeq }

    /// Starts following `room` live, taking only events after `seq` (the room's position
    /// when the connection joined; events committed before it belong to the past).
    public mutating func follow(_ room: String, after seq: Int64 = 0) {
        if cursors[room] == nil { cursors[room] = Cursor(lastSeq: seq, held: nil) }
    }

    /// Starts following `room`, holding live events until `finishReplay` is called.
    public mutating func beginReplay(_ room: String, after seq: Int64) {
        cursors[room] = Cursor(lastSeq: seq, held: [])
    }

    /// Decides what to do with a live event for this connection.
    public mutating func admit(_ event: RealtimeEvent) -> Admission {
        guard var cursor = cursors[event.room] else { return .drop }
        if cursor.held != nil {
            cursor.held!.append(event)
            if cursor.held!.count > maxHeld { cursor.held!.removeFirst() }
            cursors[event.room] = cursor
            return .hold
        }
        guard let seq = event.seq else { return .send }
        guard seq > cursor.lastSeq else { return .drop }
        cursor.lastSeq = seq
        cursors[event.room] = cursor
        return .send
    }

    /// Ends the replay of `room`: returns what to send, in order: the replayed events, then
    /// the held live events that are newer. `replayed` nil means the replay was unavailable:
    /// only the held events go out (the client refetches state).
    public mutating func finishReplay(_ room: String, replayed: [RealtimeEvent]?) -> [RealtimeEvent] {
        guard var cursor = cursors[room] else { return [] }
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
        cursor.held = nil
        cursors[room] = cursor
        return out
    }

    public mutating func leave(_ room: String) {
        cursors[room] = nil
    }
}
