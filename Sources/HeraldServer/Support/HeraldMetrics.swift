import Prometheus

/// The Prometheus registry of one server, rendered at `/metrics`.
///
/// Why a registry per application and not the global `MetricsSystem`: tests build many
/// applications in one process, and each must count only its own requests. Later modules
/// register their own counters on `registry`.
public final class HeraldMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()

    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    // Computed: `MetricNameDescriptor` is not Sendable, so it cannot be a stored static.
    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "herald", metricName: "http_requests", unitName: "total",
            helpText: "HTTP requests answered, by method, route and status.")
    }
    static var requestDuration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "herald", metricName: "http_request_duration", unitName: "seconds",
            helpText: "Time from a request's arrival to its answer, by method and route.")
    }

    public init() {}

    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.requestDuration,
            labels: [("method", method), ("route", route)],
            buckets: Self.durationBuckets
        ).recordNanoseconds(duration.nanoseconds)
    }

    public func render() -> String {
        registry.emitToString()
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
    }
}
