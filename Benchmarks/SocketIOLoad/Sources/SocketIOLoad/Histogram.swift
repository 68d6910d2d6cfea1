/// A log-linear histogram of non-negative integers (microseconds here), HdrHistogram-style:
/// exact below 128, then 64 sub-buckets per power of two (under 1.6 % relative error).
/// Plain value type: each event loop keeps its own and they are merged at the end.
struct Histogram: Sendable {
    private static let subBuckets = 64
    private static let exactBelow: UInt64 = 128
    private static let maxExponent = 44
    private(set) var counts: [UInt64]
    private(set) var count: UInt64 = 0
    private(set) var sum: Double = 0
    private(set) var max: UInt64 = 0
    private(set) var min: UInt64 = .max

    init() {
        counts = [UInt64](repeating: 0, count: Int(Self.exactBelow) + Self.maxExponent * Self.subBuckets)
    }

    static func index(_ value: UInt64) -> Int {
        if value < exactBelow { return Int(value) }
        // value >> shift lands in [64, 128).
        let bits = 64 - value.leadingZeroBitCount  // >= 8
        let shift = bits - 7
        let mantissa = Int(value >> UInt64(shift)) - subBuckets
        let idx = Int(exactBelow) + (shift - 1) * subBuckets + mantissa
        return Swift.min(idx, Int(exactBelow) + maxExponent * subBuckets - 1)
    }

    /// The highest value that lands in bucket `index` (so percentiles never under-report).
    static func upperBound(_ index: Int) -> UInt64 {
        if index < Int(exactBelow) { return UInt64(index) }
        let rel = index - Int(exactBelow)
        let shift = rel / subBuckets + 1
        let mantissa = UInt64(rel % subBuckets + subBuckets)
        return ((mantissa + 1) << UInt64(shift)) - 1
    }

    mutating func record(_ value: UInt64) {
        counts[Self.index(value)] &+= 1
        count &+= 1
        sum += Double(value)
        if value > max { max = value }
        if value < min { min = value }
    }

    mutating func merge(_ other: Histogram) {
        for i in 0..<counts.count { counts[i] &+= other.counts[i] }
        count &+= other.count
        sum += other.sum
        if other.max > max { max = other.max }
        if other.min < min { min = other.min }
    }

    func percentile(_ p: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, UInt64((p / 100 * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return Swift.min(Self.upperBound(i), max) }
        }
        return max
    }

    var mean: Double { count == 0 ? 0 : sum / Double(count) }
}
