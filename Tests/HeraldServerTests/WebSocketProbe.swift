import Foundation
import HeraldCore
import HeraldRealtime
import HeraldTestSupport
import HummingbirdWSClient
import Logging
import Synchronization

/// A WebSocket test client: frames the server sends arrive in `next()`, and `send` writes.
final class WebSocketProbe: Sendable {
    private let inbox = Mutex<(messages: [String], ended: Bool)>(([], false))
    private let outgoing: AsyncStream<String>
    private let outgoingContinuation: AsyncStream<String>.Continuation

    init() {
        (outgoing, outgoingContinuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Connects and pumps frames until `close()` or the server closes.
    func run(url: String) async throws {
        defer { inbox.withLock { $0.ended = true } }
        let outgoing = self.outgoing
        try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: Logger(label: "probe")) { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in outgoing { try await outbound.write(.text(text)) }
                    try await outbound.close(.normalClosure, reason: nil)
                }
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if case .text(let text) = message { self.inbox.withLock { $0.messages.append(text) } }
                }
                group.cancelAll()
            }
        }
    }

    func send(_ value: JSONValue) {
        outgoingContinuation.yield(SocketPacketEncoder.json(value))
    }

    func sendRaw(_ text: String) {
        outgoingContinuation.yield(text)
    }

    func close() {
        outgoingContinuation.finish()
    }

    var ended: Bool { inbox.withLock { $0.ended } }

    /// The next message as JSON, or nil after `timeout` / when the connection ended. The
    /// default is long: it returns as soon as a message is there, and a loaded machine delays
    /// one by seconds. (Checks that nothing comes pass a short timeout of their own.)
    func next(timeout: Duration = Patience.limit) async -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (text, ended): (String?, Bool) = inbox.withLock { box in
                if box.messages.isEmpty { return (nil, box.ended) }
                return (box.messages.removeFirst(), false)
            }
            if let text { return try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }
            if ended { return nil }
            try? await CancellableSleep.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// Skips messages until one of `type` arrives.
    func next(type: String, timeout: Duration = Patience.limit) async -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = await next(timeout: deadline - ContinuousClock.now) else { return nil }
            if message["type"]?.stringValue == type { return message }
        }
        return nil
    }
}
