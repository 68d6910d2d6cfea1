import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe one event loop watches: a byte written to it makes the loop's next look at I/O
/// call `onWake`, with whatever else was ready handled in the same look.
///
/// Why not a timer: `WebSocketWriteScheduler` lets I/O in between two chunks of a broadcast.
/// A timer does that by putting the loop to sleep for its delay plus the kernel's timer slack
/// (50 µs by default), and waking it again, 156 times for 10,000 sockets; a readable pipe
/// makes `epoll_wait` return at once. In the SwiftNIO floor
/// (`Benchmarks/SocketIOLoad/Sources/NIOFloor`) writing 10,000 sockets in chunks of 64 took
/// 1.51–1.62× the kernel's floor with the timer, 1.34–1.52× with the pipe, 1.28–1.33× in one
/// go (journal 2026-11-30-light-load-floors).
///
/// Only touched on its loop: the write end is closed when the loop closes the channel (at
/// shutdown), and `wake` answers false from then on, so the scheduler falls back to a timer.
final class LoopWakePipe {
    private let writeEnd: CInt
    private var open = true

    private init(writeEnd: CInt) {
        self.writeEnd = writeEnd
    }

    /// Opens a pipe on `eventLoop`; nil where the loop is not NIOPosix's (an embedded loop in
    /// tests) or no pipe can be made (the descriptor limit): the caller keeps its timer.
    static func open(
        on eventLoop: any EventLoop,
        onWake: @escaping @Sendable () -> Void
    ) -> EventLoopFuture<NIOLoopBound<LoopWakePipe>?> {
        guard let bootstrap = NIOPipeBootstrap(validatingGroup: eventLoop) else { return eventLoop.makeSucceededFuture(nil) }
        var ends: [CInt] = [-1, -1]
        guard pipe(&ends) == 0 else { return eventLoop.makeSucceededFuture(nil) }
        // A wake is one byte, and at most one is outstanding; the write end need never block.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        return bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Reader(onWake: onWake)) }
        }
        .takingOwnershipOfDescriptor(input: readEnd)
        .map { channel -> NIOLoopBound<LoopWakePipe>? in
            let pipe = NIOLoopBound(LoopWakePipe(writeEnd: writeEnd), eventLoop: eventLoop)
            channel.closeFuture.whenComplete { _ in
                pipe.value.open = false
                close(writeEnd)
            }
            return pipe
        }
        .flatMapError { _ in
            // The bootstrap did not take the read end: both ends are still ours.
            close(readEnd)
            close(writeEnd)
            return eventLoop.makeSucceededFuture(nil)
        }
    }

    /// Asks for `onWake` at the loop's next look at I/O; false if the pipe is gone or full.
    func wake() -> Bool {
        guard open else { return false }
        var byte: UInt8 = 1
        return write(writeEnd, &byte, 1) == 1
    }

    private final class Reader: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let onWake: @Sendable () -> Void

        init(onWake: @escaping @Sendable () -> Void) {
            self.onWake = onWake
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            onWake()
        }
    }
}
