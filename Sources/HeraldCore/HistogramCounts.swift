/// A Prometheus-style histogram kept in memory: cumulative counts per upper bound, the sum
/// and the count, rendered as `_bucket{le=…}`, `_sum` and `_count`.
///
/// Why a value type of our own: the module statistics (dispatch, trips) are read by the
/// server's `/metrics` as snapshots under a lock; a value copies out whole.
public struct HistogramCounts: Sendable, Equatable {
    public let bounds: [Double]
    public private(set) var buckets: [Int]
    public private(set) var count = 0
    public private(set) var sum = 0.0

    public init(bounds: [Double]) {
        self.bounds = bounds
        buckets = Array(repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        guard value.isFinite else { return }
        count += 1
        sum += value
        for (index, bound) in bounds.enumerated() where value <= bound { buckets[index] += 1 }
    }

    /// The histogram in Prometheus text format under `name`.
    public func render(_ name: String, help: String) -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (index, bound) in bounds.enumerated() { text += "\(name)_bucket{le=\"\(bound)\"} \(buckets[index])\n" }
        text += "\(name)_bucket{le=\"+Inf\"} \(count)\n\(name)_sum \(sum)\n\(name)_count \(count)\n"
        return text
    }
}

/// Counters by one label, rendered in Prometheus text format.
public struct LabelledCounts: Sendable, Equatable {
    public private(set) var values: [String: Int] = [:]

    public init() {}

    public mutating func add(_ label: String, _ amount: Int = 1) {
        values[label, default: 0] += amount
    }

    public subscript(_ label: String) -> Int { values[label] ?? 0 }

    /// `labels` are always written (0 when not seen), so a dashboard finds every series.
    public func render(_ name: String, help: String, label: String, labels: [String]) -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for key in Set(labels).union(values.keys).sorted() { text += "\(name){\(label)=\"\(key)\"} \(values[key] ?? 0)\n" }
        return text
    }
}
