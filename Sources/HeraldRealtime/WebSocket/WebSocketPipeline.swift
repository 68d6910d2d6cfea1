import NIOCore
import NIOPosix

/// What an upgraded connection's pipeline holds: Herald's frame writer first, then the
/// connection handler that reads frames and hands messages to the endpoint's receiver.
///
/// Why one entry point: the HTTP server (in `HeraldServer`) decides whether to upgrade; how
/// a WebSocket is then served is this module's business, so the handlers stay internal.
public enum WebSocketPipeline {
    /// Installs the handlers on `channel` (on its event loop, after the `101`) and starts the
    /// endpoint's receiver.
    public static func serve(_ channel: any Channel, acceptor: @escaping WebSocketAcceptor, limits: WebSocketLimits) throws {
        let writer = WebSocketFrameWriter()
        let connection = WebSocketConnectionHandler(writer: writer, limits: limits)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(writer, position: .first)
        try pipeline.addHandler(connection)
        connection.start(acceptor, on: channel.eventLoop)
    }

    /// Opens the write scheduler (and its wake pipe) of each loop of NIO's shared group, which
    /// the HTTP server serves on, as the server starts rather than at a loop's first WebSocket:
    /// no connection waits for it, and the node's descriptors are steady from the start (two
    /// per loop, inside `ConnectionLimit`'s reserve).
    public static func prepareSharedEventLoops() {
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() { _ = WebSocketWriteScheduler.of(loop) }
    }
}
