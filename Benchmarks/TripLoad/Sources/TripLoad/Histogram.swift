/// Latencies in microseconds: exact below 256 µs, then 128 buckets per power of two (each
/// bucket under 0.8 % wide). A value type: every event loop fills its own, merged at the end.
struct LatencyHistogram: Sendable {
    private static let linear = 256
    private static let perOctave = 128
    private static let octaves = 40
    private var buckets = [UInt64](repeating: 0, count: linear + octaves * perOctave)
    private(set) var count: UInt64 = 0
    private(set) var total: Double = 0
    private(set) var maximum: UInt64 = 0

    static func bucket(_ v: UInt64) -> Int {
        if v < UInt64(linear) { return Int(v) }
        let bits = 64 - v.leadingZeroBitCount  // ≥ 9
        let shift = bits - 8  // v >> shift is in [128, 256)
        let mantissa = Int(v >> UInt64(shift)) - perOctave
        return min(linear + (shift - 1) * perOctave + mantissa, linear + octaves * perOctave - 1)
    }

    /// The largest value of a bucket, so a percentile never reads low.
    static func ceiling(_ b: Int) -> UInt64 {
        if b < linear { return UInt64(b) }
        let shift = (b - linear) / perOctave + 1
        let mantissa = UInt64((b - linear) % perOctave + perOctave)
        return ((mantissa + 1) << UInt64(shift)) - 1
    }

    mutating func record(_ micros: UInt64) {
        buckets[Self.bucket(micros)] &+= 1
        count &+= 1
        total += Double(micros)
        if micros > maximum { maximum = micros }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in buckets.indices { buckets[i] &+= other.buckets[i] }
        count &+= other.count
        total += other.total
        maximum = max(maximum, other.maximum)
    }

    func percentile(_ p: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((p / 100 * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in buckets.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return min(Self.ceiling(i), maximum) }
        }
        return maximum
    }

    /// `prefix_p50_ms`, … for the JSON line.
    func fields(_ prefix: String) -> [(String, Out)] {
        func ms(_ us: UInt64) -> Out { .num(Double(us) / 1000) }
        return [
            ("\(prefix)samples", .int(Int(count))),
            ("\(prefix)p50_ms", ms(percentile(50))),
            ("\(prefix)p90_ms", ms(percentile(90))),
            ("\(prefix)p99_ms", ms(percentile(99))),
            ("\(prefix)p999_ms", ms(percentile(99.9))),
            ("\(prefix)max_ms", ms(maximum)),
            ("\(prefix)mean_ms", .num(count == 0 ? 0 : total / Double(count) / 1000)),
        ]
    }
}
