import Foundation
import HeraldCore

/// Where spans go: an OpenTelemetry collector (or any OTLP/HTTP receiver). Off unless
/// `otlp_endpoint` is set, and then nothing is traced beyond what the sampler keeps.
///
/// Why OTLP/HTTP with protobuf and no gRPC: every collector and tracing vendor takes it, and
/// the gRPC exporter would add grpc-swift to the build (docs/tracing.md). The standard
/// `OTEL_EXPORTER_OTLP_*` variables (headers, compression, timeout, certificates) refine it.
public struct TracingConfig: ConfigSection, Sendable, Equatable {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`); spans are posted to its
    /// `/v1/traces`. Nil: tracing off.
    public var otlpEndpoint: String?
    /// The `service.name` of every span.
    public var serviceName = "herald"
    /// The share of new traces kept (0 to 1); a request that arrives with a `traceparent`
    /// follows its caller's decision (parent-based sampling).
    public var sampleRatio = 1.0

    public init() {}

    public var isEnabled: Bool { otlpEndpoint != nil }

    /// `otlp_endpoint` with the traces path, as the exporter posts to it.
    public var tracesURL: String? {
        otlpEndpoint.map { $0.hasSuffix("/") ? "\($0)v1/traces" : "\($0)/v1/traces" }
    }

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("tracing")
        if let otlpEndpoint {
            let url = URL(string: otlpEndpoint)
            checks.check(
                url.map { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil && $0.query == nil && $0.user == nil } ?? false,
                "otlp_endpoint",
                "must be an http:// or https:// URL without a query or credentials (the collector's OTLP/HTTP address, such as "
                    + "http://localhost:4318; a vendor's key goes in OTEL_EXPORTER_OTLP_HEADERS)")
        }
        checks.check(!serviceName.isEmpty && serviceName.utf8.count <= 128, "service_name", "must be 1 to 128 characters")
        checks.check((0...1).contains(sampleRatio), "sample_ratio", "must be between 0 and 1")
        return checks.errors
    }
}
