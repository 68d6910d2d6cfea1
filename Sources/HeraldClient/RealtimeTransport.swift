import Foundation

/// Opens a WebSocket and runs `session` with its inbound text messages and a way to send,
/// until `session` returns or the socket closes (the inbound stream ends).
///
/// Why a seam: URLSession has WebSockets on Apple platforms but not on Linux (its libcurl
/// lacks them), where SwiftNIO's client is used; tests can also put a fake here.
public protocol RealtimeTransport: Sendable {
    func connect(
        url: URL,
        session:
            @escaping @Sendable (_ inbound: AsyncThrowingStream<String, any Error>, _ send: @escaping @Sendable (String) async throws -> Void) async throws ->
            Void
    ) async throws
}
