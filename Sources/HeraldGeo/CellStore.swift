/// The occupied cells: a dictionary from cell key to a dense cell number, and per cell one
/// contiguous array of entries.
///
/// Cell numbers let a driver name its cell in 4 bytes and let a move within the same cell
/// skip the dictionary entirely. Removal swaps the last entry into the hole, so the caller
/// must update the moved driver's index. Emptied cells release their storage and their number
/// is reused.
struct CellStore: Sendable {
    private(set) var numberByKey: [Int64: Int32] = [:]
    private(set) var entries: [[CellEntry]] = []
    private(set) var keys: [Int64] = []
    private var freeNumbers: [Int32] = []

    /// Cells holding at least one driver.
    var occupiedCount: Int { numberByKey.count }

    /// Bytes reserved by the arrays and the dictionary (capacities, array headers), without malloc's overhead.
    var approximateBytes: Int {
        let arrayHeader = 32
        var total = entries.capacity * MemoryLayout<[CellEntry]>.stride + keys.capacity * 8 + freeNumbers.capacity * 4
        for cell in entries where cell.capacity > 0 {
            total += arrayHeader + cell.capacity * MemoryLayout<CellEntry>.stride
        }
        // Keys, values and one bit of occupancy per bucket.
        total += numberByKey.capacity * (MemoryLayout<Int64>.stride + MemoryLayout<Int32>.stride) + numberByKey.capacity / 8
        return total
    }

    @inline(__always)
    func number(forKey key: Int64) -> Int32? {
        numberByKey[key]
    }

    /// Appends `entry` to the cell `key`, creating it if needed; returns the cell and the entry's index in it.
    mutating func insert(_ entry: CellEntry, key: Int64) -> (cell: Int32, index: Int32) {
        let cell: Int32
        if let existing = numberByKey[key] {
            cell = existing
        } else if let reused = freeNumbers.popLast() {
            cell = reused
            keys[Int(cell)] = key
            numberByKey[key] = cell
        } else {
            cell = Int32(entries.count)
            entries.append([])
            keys.append(key)
            numberByKey[key] = cell
        }
        let index = Int32(entries[Int(cell)].count)
        entries[Int(cell)].appendWithHeadroom(entry)
        return (cell, index)
    }

    @inline(__always)
    mutating func replace(cell: Int32, index: Int32, with entry: CellEntry) {
        entries[Int(cell)][Int(index)] = entry
    }

    @inline(__always)
    func entry(cell: Int32, index: Int32) -> CellEntry {
        entries[Int(cell)][Int(index)]
    }

    @inline(__always)
    func key(ofCell cell: Int32) -> Int64 {
        keys[Int(cell)]
    }

    /// Removes the entry at `index`; returns the slot of the entry moved into its place, if any.
    mutating func remove(cell: Int32, index: Int32) -> Int32? {
        let c = Int(cell)
        let i = Int(index)
        let last = entries[c].count - 1
        var moved: Int32?
        if i != last {
            let lastEntry = entries[c][last]
            entries[c][i] = lastEntry
            moved = lastEntry.slot
        }
        entries[c].removeLast()
        if entries[c].isEmpty {
            entries[c] = []
            numberByKey[keys[c]] = nil
            freeNumbers.append(cell)
        }
        return moved
    }
}
