import Foundation
import HeraldCore
import HeraldServer
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Starts exporting spans when `tracing.otlp_endpoint` is set: swift-otel's tracer becomes
/// the process's (`InstrumentationSystem`), with W3C trace context as its propagator, and its
/// batch exporter runs as a service beside the server.
///
/// Why only here, in `serve`: the instrumentation system is bootstrapped once per process,
/// and the test processes build many servers; they read spans through `herald serve` (the
/// end-to-end tracing test) instead.
enum TraceExport {
    /// The exporter's service, to run before the application's (so it stops after it and
    /// sends the last spans), or nil when tracing is off.
    static func start(_ config: TracingConfig, logger: Logger) throws -> (any Service)? {
        guard config.isEnabled, let url = config.tracesURL else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = config.serviceName
        configuration.resourceAttributes = [
            "service.version": BuildVersion.token,
            "service.instance.id": "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)",
        ]
        configuration.propagators = [.traceContext]
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.endpoint = url
        configuration.traces.sampler = .parentBasedTraceIDRatio(ratio: config.sampleRatio) ?? .parentBasedAlwaysOn
        // Larger batches and queue than OpenTelemetry's defaults (512 of 2,048, every 5 s): the
        // processor sends one batch at a time, so at a thousand notifications a second (four
        // or five spans each) the defaults drop most spans (Benchmarks/journal,
        // 2026-11-30-tracing-cost). `OTEL_BSP_*` still override these.
        configuration.traces.batchSpanProcessor.maxQueueSize = 16_384
        configuration.traces.batchSpanProcessor.maxExportBatchSize = 4_096
        configuration.traces.batchSpanProcessor.scheduleDelay = .seconds(1)
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        let (tracer, service) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        HeraldTracing.enable()
        logger.info("exporting traces", metadata: ["endpoint": "\(url)", "sample_ratio": "\(config.sampleRatio)"])
        return TraceExportService(exporter: service, logger: logger)
    }
}

/// The exporter's service, whose failure is logged instead of ending the server: a collector
/// that is down or slow to take the last spans at shutdown (the exporter retries, and is
/// cancelled when the graceful stop runs out) must not turn a clean stop into exit 1.
struct TraceExportService: Service {
    let exporter: any Service
    let logger: Logger

    func run() async throws {
        do {
            try await exporter.run()
        } catch is CancellationError {
            logger.warning("trace export cancelled at shutdown; unsent spans are dropped")
        } catch {
            logger.warning("trace export stopped", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
