#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Driver id ↔ slot number, in about 36 bytes per driver for 26-byte ids.
///
/// A `[String: Int32]` would cost a heap-allocated String (~64 bytes with malloc's overhead)
/// plus a dictionary entry per driver. Here every id's UTF-8 bytes sit in one arena, each slot
/// records where (`starts`, `lengths`), and an open-addressing table with linear probing
/// stores only slot numbers; a lookup compares the candidate's bytes in the arena.
/// Removal uses backward-shift deletion, so there are no tombstones to clean up. A freed
/// slot keeps its arena extent, and a new id of at most that length reuses it in place (ids
/// have one length in practice); otherwise the bytes become garbage, and the arena is
/// compacted once garbage is more than half of it.
struct DriverIDDirectory: Sendable {
    private var bytes: [UInt8] = []
    /// Per slot: where its id starts in `bytes`, and its length (a free slot: its reusable extent).
    private var starts: [Int32] = []
    private var lengths: [UInt16] = []
    /// Slot numbers, -1 for empty; the count is a power of two.
    private var buckets: [Int32]
    private(set) var count = 0
    private(set) var garbageBytes = 0
    private let seed: UInt64

    static let maximumIDLength = Int(UInt16.max)

    init() {
        buckets = Array(repeating: -1, count: 16)
        seed = UInt64.random(in: .min ... .max)
    }

    /// Bytes held by the arena (live ids plus garbage); for tests and memory accounting.
    var arenaByteCount: Int { bytes.count }

    /// Bytes reserved by the arrays (capacities), without malloc's overhead.
    var approximateBytes: Int {
        bytes.capacity + starts.capacity * 4 + lengths.capacity * 2 + buckets.capacity * 4
    }

    func hash(_ id: UnsafeRawBufferPointer) -> UInt64 {
        IDHash.hash(id, seed: seed)
    }

    func slot(for id: UnsafeRawBufferPointer, hash: UInt64) -> Int32? {
        let mask = buckets.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let slot = buckets[index]
            if slot < 0 { return nil }
            if matches(slot: slot, id) { return slot }
            index = (index + 1) & mask
        }
    }

    /// Records `id` for `slot`, which is either the next new slot number or a slot freed by `remove`.
    mutating func insert(id: UnsafeRawBufferPointer, hash: UInt64, slot: Int32) {
        precondition(id.count <= Self.maximumIDLength, "driver id longer than \(Self.maximumIDLength) bytes")
        let s = Int(slot)
        if s == starts.count {
            starts.appendWithHeadroom(appendToArena(id))
            lengths.appendWithHeadroom(UInt16(id.count))
        } else if id.count <= Int(lengths[s]) {
            let start = Int(starts[s])
            bytes.withUnsafeMutableBytes { arena in
                if id.count > 0 { arena.baseAddress!.advanced(by: start).copyMemory(from: id.baseAddress!, byteCount: id.count) }
            }
            garbageBytes -= id.count
            lengths[s] = UInt16(id.count)
        } else {
            starts[s] = appendToArena(id)
            lengths[s] = UInt16(id.count)
        }
        if (count + 1) * 10 > buckets.count * 7 { growTable() }
        place(slot: slot, hash: hash)
        count += 1
        if garbageBytes > 4096 && garbageBytes * 2 > bytes.count { compactArena() }
    }

    /// Forgets `slot`'s id (it must be present); its arena extent stays for reuse by the slot.
    mutating func remove(slot: Int32) {
        let mask = buckets.count - 1
        var hole = homeIndex(of: slot)
        while buckets[hole] != slot { hole = (hole + 1) & mask }
        var probe = hole
        while true {
            probe = (probe + 1) & mask
            let other = buckets[probe]
            if other < 0 { break }
            let home = homeIndex(of: other)
            // `other` may stay only if its home lies cyclically in (hole, probe].
            let stays = hole <= probe ? (hole < home && home <= probe) : (hole < home || home <= probe)
            if !stays {
                buckets[hole] = other
                hole = probe
            }
        }
        buckets[hole] = -1
        count -= 1
        garbageBytes += Int(lengths[Int(slot)])
    }

    func id(of slot: Int32) -> String {
        let start = Int(starts[Int(slot)])
        let length = Int(lengths[Int(slot)])
        return bytes.withUnsafeBufferPointer { arena in
            String(decoding: UnsafeBufferPointer(rebasing: arena[start..<(start + length)]), as: UTF8.self)
        }
    }

    /// String order of the two slots' ids (only needed for distance ties, which are rare).
    func idIsLess(_ a: Int32, _ b: Int32) -> Bool {
        id(of: a) < id(of: b)
    }

    @inline(__always)
    private func matches(slot: Int32, _ id: UnsafeRawBufferPointer) -> Bool {
        let s = Int(slot)
        let length = Int(lengths[s])
        guard length == id.count else { return false }
        if length == 0 { return true }
        let start = Int(starts[s])
        return bytes.withUnsafeBytes { arena in
            memcmp(arena.baseAddress! + start, id.baseAddress!, length) == 0
        }
    }

    private func homeIndex(of slot: Int32) -> Int {
        let start = Int(starts[Int(slot)])
        let length = Int(lengths[Int(slot)])
        let h = bytes.withUnsafeBytes { arena in
            hash(UnsafeRawBufferPointer(rebasing: arena[start..<(start + length)]))
        }
        return Int(truncatingIfNeeded: h) & (buckets.count - 1)
    }

    private mutating func place(slot: Int32, hash: UInt64) {
        let mask = buckets.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while buckets[index] >= 0 { index = (index + 1) & mask }
        buckets[index] = slot
    }

    private mutating func appendToArena(_ id: UnsafeRawBufferPointer) -> Int32 {
        precondition(bytes.count + id.count <= Int(Int32.max), "driver id arena over 2 GiB")
        let start = Int32(bytes.count)
        bytes.appendWithHeadroom(contentsOf: id)
        return start
    }

    private mutating func growTable() {
        let old = buckets
        buckets = Array(repeating: -1, count: old.count * 2)
        for slot in old where slot >= 0 {
            var index = homeIndex(of: slot)
            while buckets[index] >= 0 { index = (index + 1) & (buckets.count - 1) }
            buckets[index] = slot
        }
    }

    /// Copies the live ids into a fresh arena; free slots lose their extents.
    private mutating func compactArena() {
        var newBytes: [UInt8] = []
        newBytes.reserveCapacity(bytes.count - garbageBytes)
        var newStarts = [Int32](repeating: 0, count: starts.count)
        var newLengths = [UInt16](repeating: 0, count: lengths.count)
        for slot in buckets where slot >= 0 {
            let s = Int(slot)
            let start = Int(starts[s])
            let length = Int(lengths[s])
            newStarts[s] = Int32(newBytes.count)
            newLengths[s] = lengths[s]
            newBytes.append(contentsOf: bytes[start..<(start + length)])
        }
        bytes = newBytes
        starts = newStarts
        lengths = newLengths
        garbageBytes = 0
    }
}
