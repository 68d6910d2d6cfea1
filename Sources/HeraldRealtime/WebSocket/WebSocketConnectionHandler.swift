import NIOCore

/// Serves one upgraded WebSocket on its event loop: reads frames from the socket's bytes
/// (`WebSocketFrameReader`), joins fragments into messages for the
/// protocol layer's `WebSocketReceiver`, answers pings and close frames, and writes the
/// attached outbound queue — everything queued since the last write in one buffer and one
/// flush, and only while the socket takes it (a client that stops reading leaves its frames
/// in its own bounded queue, which then overflows).
///
/// What a peer can make it hold is bounded (`WebSocketLimits`): a message over the peer's
/// size limit closes the connection (1009), one left unfinished past the deadline closes it
/// (1008), and everything held is released when the handler leaves the pipeline — NIO's
/// context holds its handler, so a handler that kept its context after the connection
/// ended would keep itself and its buffers (a megabyte per hostile connection, found by an
/// attack on an unauthenticated `/socket.io/` WebSocket).
final class WebSocketConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Most bytes of frames put in one write.
    static let batchBytes = 256 * 1024

    private let writer: WebSocketFrameWriter
    private var receiver: (any WebSocketReceiver)?
    private var queue: OutboundQueue?
    private var consumer: (any OutboundQueueConsumer)?
    private var context: ChannelHandlerContext?
    /// Fragments, limits and the protocol's rules: what each frame read leads to.
    private var inbound: WebSocketInbound
    private let reader = WebSocketFrameReader()
    private let limits: WebSocketLimits
    /// The deadline of the message being received, while one is unfinished.
    private var unfinishedTimer: Scheduled<Void>?
    /// Received bytes that do not make a whole frame yet.
    private var partial: ByteBuffer?
    private var closeSent = false
    private var failed = false
    /// The socket's writability as last announced (NIO's `isWritable` is an atomic read of
    /// the channel; this is a field of an object the drain touches anyway).
    private var writable = true
    /// What NIO's channels allocate with (kept once, not per connection or per write).
    private static let allocator = ByteBufferAllocator()

    init(writer: WebSocketFrameWriter, limits: WebSocketLimits) {
        self.writer = writer
        self.limits = limits
        self.inbound = WebSocketInbound(limits: limits)
    }

    /// Called once the pipeline is complete: the protocol layer takes over.
    func start(_ acceptor: WebSocketAcceptor, on eventLoop: any EventLoop) {
        let transport = ChannelWebSocketTransport(self, eventLoop: eventLoop)
        receiver = acceptor(transport)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        writable = context.channel.isWritable
    }

    /// Breaks the context ↔ handler cycle and drops whatever a message left unfinished.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        releaseUnfinished()
    }

    private func releaseUnfinished() {
        inbound.releaseUnfinished()
        partial = nil
        unfinishedTimer?.cancel()
        unfinishedTimer = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var partial = self.partial {
            self.partial = nil
            partial.writeBuffer(&bytes)
            bytes = partial
        }
        do {
            while !closeSent, let frame = try nextFrame(from: &bytes) {
                perform(inbound.received(frame) { self.receiver?.isAuthenticated == true })
            }
        } catch {
            return protocolError(error.closeCode)
        }
        // The start of a frame whose rest is still to come (bounded: the reader refused its
        // header if the frame is over-size). Nothing is kept between whole frames.
        if bytes.readableBytes > 0, !closeSent {
            bytes.discardReadBytes()
            partial = bytes
        }
        watchUnfinished(context)
    }

    private func nextFrame(from bytes: inout ByteBuffer) throws(WebSocketFrameReader.Failure) -> WebSocketFrameReader.Frame? {
        do {
            return try reader.next(from: &bytes, maxPayload: inbound.messageLimit)
        } catch .tooLarge where inbound.becameTrusted({ receiver?.isAuthenticated == true }) {
            return try reader.next(from: &bytes, maxPayload: inbound.messageLimit)
        }
    }

    /// Starts the deadline when a message is left unfinished, stops it when none is. The
    /// deadline runs from the message's first bytes: trickling more does not extend it.
    private func watchUnfinished(_ context: ChannelHandlerContext) {
        let unfinished = (partial != nil || inbound.isUnfinished) && !closeSent
        if !unfinished {
            unfinishedTimer?.cancel()
            unfinishedTimer = nil
        } else if unfinishedTimer == nil {
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            unfinishedTimer = context.eventLoop.scheduleTask(in: limits.partialMessageTimeout) { handler.value.unfinishedTooLong() }
        }
    }

    private func unfinishedTooLong() {
        unfinishedTimer = nil
        guard partial != nil || inbound.isUnfinished else { return }
        releaseUnfinished()
        closeWebSocket(code: 1008)
    }

    private func perform(_ action: WebSocketInbound.Action) {
        switch action {
        case .deliver(let message):
            receiver?.received(message)
        case .pong(let payload):
            var buffer = Self.allocator.buffer(capacity: 2 + payload.readableBytes)
            WebSocketWire.write(control: WebSocketWire.pong, payload: payload, to: &buffer)
            writer.writeAndFlush(buffer)
        case .close(let code):
            protocolError(code)
        case .none:
            break
        }
    }

    private func protocolError(_ code: UInt16) {
        releaseUnfinished()
        closeWebSocket(code: code)
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseUnfinished()
        finish(error: failed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failed = true
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            if let receiver { receiver.shouldQuiesce() } else { context.close(promise: nil) }
            return
        }
        if case .inputClosed? = event as? ChannelEvent {
            // The client's side ended without a close frame (a lost network, a killed app): the
            // server allows half-closure for HTTP, but a WebSocket without input is over.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writable = context.channel.isWritable
        if writable { drain() }
        context.fireChannelWritabilityChanged()
    }

    private func finish(error: Bool) {
        queue?.detach()
        queue = nil
        consumer = nil
        let receiver = self.receiver
        self.receiver = nil
        receiver?.transportClosed(error: error)
    }

    // MARK: Outbound (on the loop, via ChannelWebSocketTransport)

    func attach(_ queue: OutboundQueue, consumer: any OutboundQueueConsumer) {
        guard !closeSent else { return }
        self.queue?.detach()
        self.queue = queue
        self.consumer = consumer
        queue.attach(consumer)
    }

    /// Writes what the queue holds, in one buffer, while the socket is writable.
    func drain() {
        var buffer = Self.allocator.buffer(capacity: 0)
        drain(using: &buffer)
    }

    /// `drain()` into `buffer`, which the caller reuses from one connection to the next (the
    /// write round's: NIO has let go of it once the write went out, so clearing it keeps its
    /// storage; if a write is still pending, clearing allocates anew and nothing is shared).
    func drain(using buffer: inout ByteBuffer) {
        guard let queue, let context, !closeSent else { return }
        guard writable else {
            // The peer stopped reading and its queue overflowed: it cannot take a close frame
            // either, so the connection is cut now (descriptor, slot and rooms freed), not
            // once the socket drains, which a vanished peer's never does.
            if queue.closeReason == .slowConsumer {
                receiver?.outboundFinished(.slowConsumer)
                closeSent = true
                context.close(promise: nil)
            }
            return
        }
        buffer.clear()
        let batch = queue.takeBatch(maxBytes: Self.batchBytes) { WebSocketWire.write($0, to: &buffer) }
        if batch.taken > 0 { writer.writeAndFlush(buffer) }
        if let reason = batch.finished {
            receiver?.outboundFinished(reason)
            closeWebSocket(code: reason == .slowConsumer ? 1008 : 1000)
        } else if batch.more, let consumer {
            // The rest in the next round (the queue still counts this consumer as told).
            consumer.outboundQueueHasWork()
        }
    }

    func sendNow(_ frame: OutboundFrame) {
        guard context != nil, !closeSent else { return }
        var buffer = Self.allocator.buffer(capacity: frame.byteCount + 10)
        WebSocketWire.write(frame, to: &buffer)
        writer.writeAndFlush(buffer)
    }

    func setReadingPaused(_ paused: Bool) {
        writer.setReadingPaused(paused)
    }

    /// Sends a close frame with `code` and closes the connection.
    func closeWebSocket(code: UInt16) {
        guard let context, !closeSent else { return }
        closeSent = true
        var buffer = Self.allocator.buffer(capacity: 4)
        WebSocketWire.writeHeader(WebSocketWire.close, length: 2, to: &buffer)
        buffer.writeInteger(code)
        writer.writeAndFlush(buffer)
        context.close(promise: nil)
    }
}
