import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Logging
import Synchronization
import Testing

/// Collects log records so tests can see what reached the log (and what did not reach the client).
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])

    var logger: Logger {
        Logger(label: "capture") { _ in CapturingHandler(capture: self) }
    }

    struct CapturingHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            capture.lines.withLock { $0.append("\(event.level) \(event.message) \(rendered)") }
        }
    }
}

struct DatabaseExploded: Error, CustomStringConvertible {
    var description: String { "connection to db.internal:5432 failed, password=hunter2" }
}

@Suite struct InternalErrorTests {
    @Test func unknownErrorsAreAGeneric500AndTheirDetailOnlyInTheLog() async throws {
        let capture = LogCapture()
        try await TestServer.run(
            .sqlite, logger: capture.logger,
            extraRoutes: { api in
                api.get("/test/explode") { _, _ -> String in throw DatabaseExploded() }
            }
        ) { session in
            let reply = try await session.request(.get, "/api/v1/test/explode", headers: [.init("X-Request-ID")!: "trace-me-1"])
            #expect(reply.status == 500)
            #expect(reply.errorCode == "INTERNAL_SERVER_ERROR")
            #expect(reply.json?["error"]?["message"] == "An unexpected error occurred. Please try again later.")
            #expect(!reply.text.contains("hunter2"))
            #expect(!reply.text.contains("db.internal"))
            #expect(reply.json?["meta"]?["request_id"] == "trace-me-1")
            let logged = capture.lines.withLock { $0 }.filter { $0.contains("hunter2") }
            #expect(logged.count == 1)
            #expect(logged.first?.contains("request_id=trace-me-1") == true)
        }
    }

    @Test func tokensNeverReachTheLog() async throws {
        let capture = LogCapture()
        try await TestServer.run(.sqlite, logger: capture.logger) { session in
            let token = try await session.token("ann")
            _ = try await session.request(.get, "/api/v1/me", token: token)
            _ = try await session.request(.get, "/api/v1/me", token: token + "tampered")
            let lines = capture.lines.withLock { $0 }
            #expect(!lines.isEmpty)
            #expect(!lines.contains { $0.contains(token) || $0.contains(TestServer.secret) })
        }
    }
}
