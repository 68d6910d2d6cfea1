import NIOCore

/// `WebSocketTransport` for the protocol layer, which may call from any thread: each call
/// runs on the connection's event loop.
final class ChannelWebSocketTransport: WebSocketTransport, OutboundQueueConsumer {
    let eventLoop: any EventLoop
    private let connection: NIOLoopBound<WebSocketConnectionHandler>
    private let scheduler: WebSocketWriteScheduler

    init(_ connection: WebSocketConnectionHandler, eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        self.connection = NIOLoopBound(connection, eventLoop: eventLoop)
        scheduler = WebSocketWriteScheduler.of(eventLoop)
    }

    private func onLoop(_ body: @escaping @Sendable (WebSocketConnectionHandler) -> Void) {
        if eventLoop.inEventLoop {
            body(connection.value)
        } else {
            let connection = self.connection
            eventLoop.execute { body(connection.value) }
        }
    }

    func attach(_ queue: OutboundQueue) {
        onLoop { $0.attach(queue, consumer: self) }
    }

    func sendNow(_ frame: OutboundFrame) {
        onLoop { $0.sendNow(frame) }
    }

    func close() {
        onLoop { $0.closeWebSocket(code: 1000) }
    }

    func setReadingPaused(_ paused: Bool) {
        onLoop { $0.setReadingPaused(paused) }
    }

    /// Always a drain in the loop's next write round, even from the loop itself: what else
    /// is queued before it runs (the rest of a broadcast, the next events) goes out in the
    /// same write.
    func outboundQueueHasWork() {
        scheduler.needsDrain(self)
    }

    /// Called by the scheduler, on the loop, with the buffer its round reuses.
    func drainOnLoop(using buffer: inout ByteBuffer) {
        connection.value.drain(using: &buffer)
    }
}
