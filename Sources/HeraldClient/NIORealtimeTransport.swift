#if canImport(FoundationNetworking)
    import Foundation
    import Logging
    import WSClient

    /// The WebSocket on Linux: SwiftNIO's client (Foundation's URLSession has none there).
    struct DefaultRealtimeTransport: RealtimeTransport {
        /// The largest message accepted from the server (a `sync` with its notifications).
        static let maxMessageBytes = 4 << 20

        func connect(
            url: URL,
            session: @escaping @Sendable (AsyncThrowingStream<String, any Error>, @escaping @Sendable (String) async throws -> Void) async throws -> Void
        ) async throws {
            var logger = Logger(label: "herald.client.websocket")
            logger.logLevel = .critical
            try await WebSocketClient.connect(
                url: url.absoluteString, configuration: .init(maxFrameSize: Self.maxMessageBytes), logger: logger
            ) { inbound, outbound, _ in
                let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            for try await message in inbound.messages(maxSize: Self.maxMessageBytes) {
                                if case .text(let text) = message { continuation.yield(text) }
                            }
                            continuation.finish()
                        } catch {
                            continuation.finish(throwing: error)
                        }
                    }
                    try await session(stream) { text in try await outbound.write(.text(text)) }
                    group.cancelAll()
                }
            }
        }
    }
#endif
