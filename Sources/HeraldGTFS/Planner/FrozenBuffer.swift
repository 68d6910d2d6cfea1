/// Elements written once, when the buffer is made, and only read after: how the planner's
/// inner loops read the timetable without a bounds check or an array's bookkeeping per
/// element (`ServiceWindow`, `TransitNetwork`'s scan arrays).
///
/// Why `@unchecked Sendable` is safe: the memory is initialised in `init`, before the object
/// can be shared, never written again, and freed in `deinit`, when no reference to the
/// object is left; a reader takes `base` from an object it holds, so the memory outlives
/// every read.
final class FrozenBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    let base: UnsafePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        let memory = UnsafeMutablePointer<Element>.allocate(capacity: max(1, elements.count))
        elements.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { memory.initialize(from: start, count: source.count) }
        }
        base = UnsafePointer(memory)
        count = elements.count
    }

    deinit {
        UnsafeMutablePointer(mutating: base).deallocate()
    }

    /// The elements as an array (tests, building other structures).
    var elements: [Element] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
