/// The columns of one grid row that a `CapBounds` touches: `low...high` in unwrapped column
/// numbers (taken modulo `count`), or the whole row.
///
/// Kept unwrapped so that a span that grows outwards (the ring search) always contains the
/// previous one, and the newly covered columns are just the two ends.
struct ColumnSpan: Equatable {
    var low: Int
    var high: Int
    /// Columns in this row.
    var count: Int
    var isFull: Bool

    static func full(count: Int) -> ColumnSpan {
        ColumnSpan(low: 0, high: count - 1, count: count, isFull: true)
    }

    var cellCount: Int { isFull ? count : high - low + 1 }

    func contains(column: Int) -> Bool {
        if isFull { return true }
        var offset = (column - low) % count
        if offset < 0 { offset += count }
        return offset <= high - low
    }

    /// Calls `body` with each column (0..<count) in `self` but not in `inner`, which must be a
    /// span of the same row that `self` contains (nil: nothing visited yet).
    @inline(__always)
    func forEachColumn(notIn inner: ColumnSpan?, _ body: (Int) -> Void) {
        guard let inner else {
            for column in low...high { body(Self.wrap(column, count)) }
            return
        }
        if inner.isFull { return }
        if isFull {
            // Every residue not in inner: the columns after inner.high, round to inner.low.
            let end = inner.low + count - 1
            if inner.high + 1 <= end {
                for column in (inner.high + 1)...end { body(Self.wrap(column, count)) }
            }
            return
        }
        if low < inner.low {
            for column in low...(inner.low - 1) { body(Self.wrap(column, count)) }
        }
        if high > inner.high {
            for column in (inner.high + 1)...high { body(Self.wrap(column, count)) }
        }
    }

    /// Number of columns `forEachColumn(notIn:)` would visit.
    func cellCount(notIn inner: ColumnSpan?) -> Int {
        guard let inner else { return cellCount }
        if inner.isFull { return 0 }
        return cellCount - inner.cellCount
    }

    @inline(__always)
    static func wrap(_ column: Int, _ count: Int) -> Int {
        if column >= 0 && column < count { return column }
        let r = column % count
        return r < 0 ? r + count : r
    }
}
