/// Percentiles of per-operation latencies, in microseconds.
struct LatencyStats {
    let count: Int
    let p50: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let max: Double
    let mean: Double

    init(nanoseconds samples: [UInt64]) {
        let sorted = samples.sorted()
        count = sorted.count
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return Double(sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]) / 1_000
        }
        p50 = percentile(0.50)
        p90 = percentile(0.90)
        p99 = percentile(0.99)
        p999 = percentile(0.999)
        max = Double(sorted.last ?? 0) / 1_000
        mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1_000
    }

    func add(to line: inout JSONLine) {
        line["queries"] = count
        line["p50_us"] = p50
        line["p90_us"] = p90
        line["p99_us"] = p99
        line["p999_us"] = p999
        line["max_us"] = max
        line["mean_us"] = mean
    }
}
