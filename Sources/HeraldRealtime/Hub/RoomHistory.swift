import NIOCore

/// The recent persisted events of each room this node has seen, in memory, for replays.
///
/// Why: a reconnect replays every room the client was in, and reading each from the
/// database (two statements per room, through SQLite's single connection) made a storm of
/// thousands of reconnects queue behind one another. Most gaps are seconds long and lie
/// within what this node has just delivered itself.
///
/// Why it stays correct: an entry holds a contiguous run of a room's events ending at the
/// highest sequence this node knows (`last`). A replay is answered here only when that run
/// covers everything after the client's position up to `last`; anything newer than `last`
/// that was committed elsewhere is still on its way through the cluster bus and reaches the
/// client live, because the client joined the room before asking. A gap in what arrives (a
/// sequence skipped) restarts the run, and every other case falls back to the database.
/// Bounded by events per room, payload size, rooms and total bytes; over the byte budget it
/// starts over empty (the database still has everything).
struct RoomHistory {
    struct Entry {
        /// The highest sequence known for the room.
        var last: Int64
        /// Events `last - events.count + 1 … last`, oldest first.
        var events = CircularBuffer<RealtimeEvent>()
        var bytes = 0

        var first: Int64 { last - Int64(events.count) + 1 }
    }

    var maxEventsPerRoom = 256
    var maxEventBytes = 16 * 1024
    var maxRooms = 100_000
    var maxBytes = 64 * 1024 * 1024

    private(set) var entries: [String: Entry] = [:]
    private(set) var bytes = 0

    init(maxEventsPerRoom: Int = 256, maxEventBytes: Int = 16 * 1024, maxRooms: Int = 100_000, maxBytes: Int = 64 * 1024 * 1024) {
        self.maxEventsPerRoom = maxEventsPerRoom
        self.maxEventBytes = maxEventBytes
        self.maxRooms = maxRooms
        self.maxBytes = maxBytes
    }

    static func size(_ event: RealtimeEvent) -> Int { event.payloadJSON.utf8.count + event.name.utf8.count + 64 }

    /// The database says the room's last sequence is `seq` (read at a join or a replay).
    mutating func noteLast(_ room: String, _ seq: Int64) {
        if let entry = entries[room] {
            // Behind the database: events are missing here (in flight or lost). Start over.
            if seq > entry.last { replace(room, with: Entry(last: seq)) }
        } else {
            insert(room, Entry(last: seq))
        }
    }

    /// A persisted event was delivered on this node (published here or received from the bus).
    mutating func append(_ event: RealtimeEvent) {
        guard let seq = event.seq else { return }
        let kept = RealtimeEvent(room: event.room, seq: seq, name: event.name, payloadJSON: event.payloadJSON, createdAt: event.createdAt)
        let size = Self.size(kept)
        guard size <= maxEventBytes else {
            // Not kept: the run would have a hole, so the room is answered by the database.
            remove(event.room)
            return
        }
        guard var entry = entries[event.room] else {
            var entry = Entry(last: seq)
            entry.events.append(kept)
            entry.bytes = size
            insert(event.room, entry)
            return
        }
        if seq <= entry.last { return }  // already known (a duplicate, or older than a database read)
        if seq != entry.last + 1 {
            var fresh = Entry(last: seq)
            fresh.events.append(kept)
            fresh.bytes = size
            replace(event.room, with: fresh)
            return
        }
        entries[event.room] = nil  // (no copy of the buffer while it is changed)
        entry.events.append(kept)
        entry.last = seq
        entry.bytes += size
        bytes += size
        while entry.events.count > maxEventsPerRoom, let dropped = entry.events.popFirst() {
            entry.bytes -= Self.size(dropped)
            bytes -= Self.size(dropped)
        }
        entries[event.room] = entry
        if bytes > maxBytes { removeAll() }
    }

    /// Every event after `seq` up to the room's known last, or nil when this cannot say
    /// (unknown room, a position before what is kept, or after what this node has seen).
    func replay(_ room: String, after seq: Int64) -> [RealtimeEvent]? {
        guard let entry = entries[room], seq >= entry.first - 1, seq <= entry.last else { return nil }
        let skip = Int(seq - (entry.first - 1))
        return Array(entry.events.dropFirst(skip))
    }

    private mutating func insert(_ room: String, _ entry: Entry) {
        if entries.count >= maxRooms, let victim = entries.keys.first { remove(victim) }
        entries[room] = entry
        bytes += entry.bytes
        if bytes > maxBytes { removeAll() }
    }

    private mutating func replace(_ room: String, with entry: Entry) {
        remove(room)
        insert(room, entry)
    }

    /// This node stops seeing the room's events (the cluster bus skips rooms without local
    /// members): what is kept could go stale, so it goes.
    mutating func forget(_ room: String) { remove(room) }

    private mutating func remove(_ room: String) {
        if let old = entries.removeValue(forKey: room) { bytes -= old.bytes }
    }

    mutating func removeAll() {
        entries.removeAll()
        bytes = 0
    }
}
