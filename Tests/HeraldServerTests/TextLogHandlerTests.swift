import Logging
import Synchronization
import Testing

@testable import HeraldServer

/// The text log lines are swift-log's `StreamLogHandler` lines, metadata and all, however
/// the metadata was set (keys set one by one, removed, merged with a line's own).
@Suite struct TextLogHandlerTests {
    final class Lines: TextOutputStream, Sendable {
        private let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
        /// The lines without their timestamps (two loggers may straddle a second).
        var withoutTimestamps: [String] {
            text.withLock { $0 }.split(separator: "\n").map { String($0.drop { $0 != " " }) }
        }
    }

    static func exercise(_ logger: inout Logger) {
        logger.logLevel = .info
        logger[metadataKey: "hb.request.id"] = "7"
        logger[metadataKey: "request_id"] = "req_1"
        logger[metadataKey: "hb.request.id"] = nil
        logger.info("request", metadata: ["status": "202", "path": "/api/v1/realtime/publish"])
        logger.debug("not written")
        logger.warning("no extra metadata")
        logger[metadataKey: "request_id"] = nil
        logger.error("nothing at all")
    }

    @Test func linesAreTheStreamHandlersLines() {
        let reference = Lines()
        let ours = Lines()
        var streamLogger = Logger(label: "herald") { StreamLogHandler(label: $0, stream: reference, metadataProvider: nil) }
        var textLogger = Logger(label: "herald") { TextLogHandler(StreamLogHandler(label: $0, stream: ours, metadataProvider: nil)) }
        Self.exercise(&streamLogger)
        Self.exercise(&textLogger)
        #expect(ours.withoutTimestamps.count == 3)
        #expect(ours.withoutTimestamps == reference.withoutTimestamps)
        #expect(ours.withoutTimestamps.first?.contains("path=/api/v1/realtime/publish request_id=req_1 status=202") == true)
    }
}
