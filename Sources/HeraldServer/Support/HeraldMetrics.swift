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

    public init() {}

    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(name: "herald_http_requests_total", labels: labels).increment()
        registry.makeDurationHistogram(
            name: "herald_http_request_duration_seconds",
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
