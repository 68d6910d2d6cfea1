#if !canImport(FoundationNetworking)
    import Foundation

    /// The WebSocket on Apple platforms: URLSession's.
    struct DefaultRealtimeTransport: RealtimeTransport {
        func connect(
            url: URL,
            session: @escaping @Sendable (AsyncThrowingStream<String, any Error>, @escaping @Sendable (String) async throws -> Void) async throws -> Void
        ) async throws {
            let task = URLSession.shared.webSocketTask(with: url)
            task.maximumMessageSize = 4 << 20
            task.resume()
            let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
            let reader = Task {
                do {
                    while true {
                        switch try await task.receive() {
                        case .string(let text): continuation.yield(text)
                        case .data(let data): continuation.yield(String(decoding: data, as: UTF8.self))
                        @unknown default: break
                        }
                    }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            defer {
                reader.cancel()
                task.cancel(with: .normalClosure, reason: nil)
            }
            try await session(stream) { text in try await task.send(.string(text)) }
        }
    }
#endif
