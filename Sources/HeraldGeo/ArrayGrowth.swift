/// Appending with 25% headroom instead of Swift's doubling.
///
/// The grid's arrays hold one element per driver (or per id byte); at a million drivers,
/// doubling leaves up to half of each array unused — about 30 bytes per driver in total.
/// Growing by a quarter bounds the waste at 20% for an amortised cost of copying each
/// element about four more times while the grid grows.
extension Array {
    @inline(__always)
    mutating func appendWithHeadroom(_ element: Element) {
        if count == capacity { reserveCapacity(Swift.max(16, count + count / 4)) }
        append(element)
    }

    @inline(__always)
    mutating func appendWithHeadroom(contentsOf bytes: UnsafeRawBufferPointer) where Element == UInt8 {
        if count + bytes.count > capacity { reserveCapacity(Swift.max(64, count + bytes.count, count + count / 4)) }
        append(contentsOf: bytes)
    }
}
