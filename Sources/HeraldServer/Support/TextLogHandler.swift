import Logging

/// swift-log's `StreamLogHandler` lines on standard output, with the handler's metadata
/// rendered when a line is written rather than whenever it is set.
///
/// Why: `StreamLogHandler` renders its metadata (sorted, joined) every time a key is set, and
/// every request sets two (Hummingbird's request id, then Herald's), so a server logging at
/// `warning` still rendered text twice per request that it never wrote: 4–5 % of a node's CPU
/// at small-room publish rates (BENCHMARKS.md, issue 43). The lines are the same.
public struct TextLogHandler: LogHandler {
    private var output: StreamLogHandler
    public var metadata: Logger.Metadata = [:]

    public init(label: String) {
        self.init(StreamLogHandler.standardOutput(label: label))
    }

    /// Writes through `output` (a test's stream).
    init(_ output: StreamLogHandler) {
        self.output = output
    }

    public var logLevel: Logger.Level {
        get { output.logLevel }
        set { output.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { output.metadataProvider }
        set { output.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        output.log(event: event)
    }
}
