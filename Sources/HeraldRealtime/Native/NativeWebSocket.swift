import Synchronization

/// The WebSocket of one native-protocol connection: its messages are handled one at a
/// time, in order, through a `SerialMailbox` (no task while the connection only waits).
final class NativeWebSocket: WebSocketReceiver {
    private enum Work: Sendable {
        case start
        case message(String)
        case finish
    }

    private let server: NativeRealtimeServer
    private let connection: NativeConnection
    private let mailbox: SerialMailbox<Work>
    private let open = Atomic<Bool>(true)
    /// The token was checked before the upgrade.
    var isAuthenticated: Bool { true }

    init(server: NativeRealtimeServer, connection: NativeConnection, transport: any WebSocketTransport) {
        self.server = server
        self.connection = connection
        // The transport strongly, on purpose: a weak reference would give it a side table, and
        // every retain of it (one per broadcast member) would then be an out-of-line atomic on
        // another cache line. The cycle this closes (transport → handler → receiver → mailbox)
        // ends when the connection does: the handler drops its receiver.
        mailbox = SerialMailbox(limit: EngineWebSocket.backlogLimit) { paused in transport.setReadingPaused(paused) }
        post(.start)
    }

    private func post(_ work: Work) {
        let server = self.server
        let connection = self.connection
        mailbox.post(work) { work in
            switch work {
            case .start:
                await server.start(connection)
            case .message(let text):
                // After the queue closed (an overflow, an expired token) nothing more is read.
                guard connection.queue.closeReason == nil else { return }
                await server.handle(text, from: connection)
            case .finish:
                server.finish(connection)
            }
        }
    }

    func received(_ frame: InboundFrame) {
        guard open.load(ordering: .relaxed) else { return }
        switch frame {
        case .text(let text): post(.message(text))
        case .binary: connection.sendError(.invalidMessage, "Messages are JSON text.")
        }
    }

    func outboundFinished(_ reason: OutboundQueue.CloseReason) {}

    func transportClosed(error: Bool) {
        guard open.exchange(false, ordering: .relaxed) else { return }
        post(.finish)
    }

    func shouldQuiesce() {
        connection.sendError(.serverClosing, "The server is restarting; reconnect.")
        connection.queue.close()
    }
}
