import NIOCore

/// The outbound end of a served WebSocket, placed next to the socket so that what it writes
/// (whole frames, already encoded, several in one buffer) skips NIO's per-frame encoder. It
/// also holds reads back while the connection's receiver has a full backlog.
final class WebSocketFrameWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private(set) var context: ChannelHandlerContext?
    private var readingPaused = false
    private var readPending = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func setReadingPaused(_ paused: Bool) {
        readingPaused = paused
        if !paused, readPending, let context {
            readPending = false
            context.read()
        }
    }

    /// Writes `buffer` (encoded frames) and flushes.
    func writeAndFlush(_ buffer: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }
}
