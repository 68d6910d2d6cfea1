import Testing

@testable import HeraldCore

/// What a `traceparent` must look like before the tracer's parser sees it (from a request, an
/// outbox row or a bus message), and that tracing off costs the hops nothing.
@Suite struct HeraldTracingTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aVersionZeroTraceParentIsAccepted() {
        #expect(HeraldTracing.isWellFormed(Self.valid))
        #expect(HeraldTracing.isWellFormed("00-00000000000000000000000000000001-0000000000000001-00"))
    }

    @Test func anythingElseStartsANewTrace() {
        let bad = [
            "",
            "00-not-a-trace-01",
            Self.valid.uppercased(),  // W3C: lower-case hex only
            "01" + Self.valid.dropFirst(2),  // a version this process does not write
            "ff" + Self.valid.dropFirst(2),
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // an all-zero trace id is invalid
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // …and an all-zero span id
            Self.valid + "-00",  // trailing fields
            String(Self.valid.dropLast()),
            Self.valid.replacingOccurrences(of: "-00f0", with: "_00f0"),
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
        ]
        for value in bad {
            #expect(!HeraldTracing.isWellFormed(value), "\(value)")
        }
    }

    /// Off (nothing bootstrapped it, as in every test process): no context is read or
    /// written, and a span's body runs once, without a span.
    @Test func withTracingOffTheHopsAreBypassed() async throws {
        #expect(HeraldTracing.isEnabled == false)
        #expect(HeraldTracing.currentTraceParent() == nil)
        var runs = 0
        let value = await HeraldTracing.withSpan("deliver push", continuing: Self.valid, ofKind: .consumer) { span in
            runs += 1
            return span == nil ? 7 : -1
        }
        #expect(value == 7 && runs == 1)
        await #expect(throws: CancellationError.self) {
            try await HeraldTracing.withSpan("send push", continuing: nil, ofKind: .client) { _ in throw CancellationError() }
        }
    }
}
