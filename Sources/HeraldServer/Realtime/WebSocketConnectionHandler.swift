import HeraldRealtime
import NIOCore

/// Serves one upgraded WebSocket on its event loop: reads frames from the socket's bytes
/// (`WebSocketFrameReader`), joins fragments into messages for the
/// protocol layer's `WebSocketReceiver`, answers pings and close frames, and writes the
/// attached outbound queue — everything queued since the last write in one buffer and one
/// flush, and only while the socket takes it (a client that stops reading leaves its frames
/// in its own bounded queue, which then overflows).
final class WebSocketConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Most bytes of frames put in one write.
    static let batchBytes = 256 * 1024

    private let writer: WebSocketFrameWriter
    private var receiver: (any WebSocketReceiver)?
    private var queue: OutboundQueue?
    private var consumer: (any OutboundQueueConsumer)?
    private var context: ChannelHandlerContext?
    /// A message arriving in fragments: its opcode and what came so far.
    private var fragments: (opcode: UInt8, data: ByteBuffer)?
    private let reader: WebSocketFrameReader
    /// Received bytes that do not make a whole frame yet.
    private var partial: ByteBuffer?
    private var closeSent = false
    private var failed = false
    /// The socket's writability as last announced (NIO's `isWritable` is an atomic read of
    /// the channel; this is a field of an object the drain touches anyway).
    private var writable = true
    /// What NIO's channels allocate with (kept once, not per connection or per write).
    private static let allocator = ByteBufferAllocator()

    init(writer: WebSocketFrameWriter, maxMessageBytes: Int) {
        self.writer = writer
        self.reader = WebSocketFrameReader(maxPayload: maxMessageBytes)
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

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var partial = self.partial {
            self.partial = nil
            partial.writeBuffer(&bytes)
            bytes = partial
        }
        do {
            while !closeSent, let frame = try reader.next(from: &bytes) {
                received(frame)
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
    }

    private func received(_ frame: WebSocketFrameReader.Frame) {
        switch frame.opcode {
        case WebSocketWire.text, WebSocketWire.binary:
            guard fragments == nil else { return protocolError(1002) }
            if frame.fin {
                deliver(frame.opcode, frame.payload)
            } else {
                fragments = (frame.opcode, frame.payload)
            }
        case WebSocketWire.continuation:
            guard case (let opcode, var data)? = fragments else { return protocolError(1002) }
            fragments = nil
            var more = frame.payload
            guard data.readableBytes + more.readableBytes <= reader.maxPayload else { return protocolError(1009) }
            data.writeBuffer(&more)
            if frame.fin {
                deliver(opcode, data)
            } else {
                fragments = (opcode, data)
            }
        case WebSocketWire.ping:
            var buffer = Self.allocator.buffer(capacity: 2 + frame.payload.readableBytes)
            WebSocketWire.write(control: WebSocketWire.pong, payload: frame.payload, to: &buffer)
            writer.writeAndFlush(buffer)
        case WebSocketWire.close:
            // Answer with the client's code (RFC 6455 §5.5.1), then close.
            var data = frame.payload
            let code = data.readableBytes >= 2 ? data.readInteger(as: UInt16.self) ?? 1000 : 1000
            closeWebSocket(code: code)
        default:
            break  // pong
        }
    }

    private func deliver(_ opcode: UInt8, _ data: ByteBuffer) {
        if opcode == WebSocketWire.text {
            guard let text = String(validating: data.readableBytesView, as: UTF8.self) else { return protocolError(1007) }
            receiver?.received(.text(text))
        } else {
            receiver?.received(.binary(Array(data.readableBytesView)))
        }
    }

    private func protocolError(_ code: UInt16) {
        fragments = nil
        closeWebSocket(code: code)
    }

    func channelInactive(context: ChannelHandlerContext) {
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
        guard let queue, context != nil, !closeSent, writable else { return }
        let batch = queue.takeBatch(maxBytes: Self.batchBytes)
        if !batch.frames.isEmpty {
            var buffer = Self.allocator.buffer(capacity: batch.bytes + 10 * batch.frames.count)
            for frame in batch.frames { WebSocketWire.write(frame, to: &buffer) }
            writer.writeAndFlush(buffer)
        }
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
