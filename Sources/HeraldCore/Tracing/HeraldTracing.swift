import Instrumentation
import Synchronization
import Tracing

/// W3C trace context across the hops a request's work takes after its HTTP span has ended:
/// into an outbox row, across the cluster bus, into a worker's delivery.
///
/// Why a switch of its own rather than relying on the no-op tracer: with tracing off every
/// call here is one relaxed atomic load. `InstrumentationSystem.tracer` takes a lock on each
/// read and `withSpan` sets a task-local even for no-op spans; a delivery worker sending
/// thousands of pushes a second would pay that for spans nobody exports.
///
/// Only `traceparent` travels (55 characters), not `tracestate`: docs/tracing.md.
public enum HeraldTracing {
    private static let enabled = Atomic<Bool>(false)

    /// Whether spans are made: set once, after `InstrumentationSystem.bootstrap`.
    public static var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// Turns span making on; call after bootstrapping the tracer (`herald serve` does when
    /// `tracing.otlp_endpoint` is set).
    public static func enable() { enabled.store(true, ordering: .relaxed) }

    /// The current task's trace context as a `traceparent` value, to store with work another
    /// task does later; nil when tracing is off or the task is in no trace.
    public static func currentTraceParent() -> String? {
        guard isEnabled, let context = InstrumentationContext.current else { return nil }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryInjector())
        return carrier["traceparent"].flatMap { isWellFormed($0) ? $0 : nil }
    }

    /// Runs `body` in a span continuing `traceParent`, or the current task's trace when nil
    /// (a new trace when the task is in none); without tracing, just runs it (the span
    /// argument is then nil).
    public static func withSpan<T>(
        _ name: String, continuing traceParent: String?, ofKind kind: SpanKind, attributes: [String: String] = [:],
        isolation: isolated (any Actor)? = #isolation, _ body: (Span?) async throws -> T
    ) async rethrows -> T {
        guard isEnabled else { return try await body(nil) }
        var context = InstrumentationContext.current ?? .topLevel
        if let traceParent, isWellFormed(traceParent) {
            context = .topLevel
            InstrumentationSystem.instrument.extract(["traceparent": traceParent], into: &context, using: DictionaryExtractor())
        }
        let span = startSpan(name, context: context, ofKind: kind)
        span.updateAttributes { spanAttributes in
            for (key, value) in attributes { spanAttributes[key] = value }
        }
        defer { span.end() }
        do {
            return try await InstrumentationContext.$current.withValue(span.context) { try await body(Span(span)) }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// The span handed to a body, to add what it learnt (an outcome, an id).
    public struct Span: Sendable {
        let span: any Tracing.Span

        init(_ span: any Tracing.Span) { self.span = span }

        public func set(_ key: String, _ value: String?) {
            guard let value else { return }
            span.attributes[key] = value
        }

        public func set(_ key: String, _ value: Int) {
            span.attributes[key] = value
        }

        /// Names the span once its work knows what it was (a request's route).
        public func rename(_ name: String) {
            span.operationName = name
        }

        /// Marks the span failed (what an operator filters on), with `description`.
        public func fail(_ description: String) {
            span.setStatus(SpanStatus(code: .error, message: description))
        }
    }

    /// A version-00 `traceparent` as W3C Trace Context defines it: `00-<32 hex>-<16 hex>-<2 hex>`,
    /// lower case, neither id all zeros. What this process writes, and all it accepts from a
    /// request, a row or a bus message: anything else starts a new trace. (Checked before the
    /// tracer's own parser sees it, which logs what it cannot parse.)
    public static func isWellFormed(_ value: String) -> Bool {
        var value = value
        return value.withUTF8(isWellFormed)
    }

    private static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 55, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "0") else { return false }
        var traceIDZero = true
        var spanIDZero = true
        for index in 2..<55 {
            let byte = bytes[index]
            if index == 2 || index == 35 || index == 52 {
                guard byte == UInt8(ascii: "-") else { return false }
                continue
            }
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
            if byte != UInt8(ascii: "0") {
                if index < 35 { traceIDZero = false } else if index < 52 { spanIDZero = false }
            }
        }
        return !traceIDZero && !spanIDZero
    }
}

private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
