import NIOCore

/// The network side of one WebSocket, as the HTTP layer provides it: an event-loop channel
/// handler, not a task.
///
/// Why this shape: a connection that is only waiting costs no suspended task (a parked
/// reader and writer task cost ≈ 22 KB each connection), and a broadcast hands each member's
/// frames to its event loop, where everything queued since the last write goes out in one.
public protocol WebSocketTransport: AnyObject, Sendable {
    /// The loop the connection lives on: `WebSocketReceiver` calls arrive on it.
    var eventLoop: any EventLoop { get }
    /// Writes `queue`'s frames from now on, as they come; once the queue is closed and
    /// empty, the WebSocket is closed (close frame, then the connection).
    func attach(_ queue: OutboundQueue)
    /// Writes one frame now, outside any queue (the answer to an upgrade probe).
    func sendNow(_ frame: OutboundFrame)
    /// Closes the WebSocket without waiting for a queue (a refused or failed upgrade).
    func close()
    /// Stops reading from the socket while the receiver's backlog is full, and resumes.
    func setReadingPaused(_ paused: Bool)
}

/// The protocol side of one WebSocket (Engine.IO or the native protocol). Called on the
/// transport's event loop, in order; must not block.
public protocol WebSocketReceiver: AnyObject, Sendable {
    /// One whole message (fragments already joined, at most the configured size).
    func received(_ frame: InboundFrame)
    /// The attached queue closed and everything in it was written; the WebSocket closes next.
    func outboundFinished(_ reason: OutboundQueue.CloseReason)
    /// The connection is gone: the client closed it, it failed (`error`), or the server did.
    /// Called once, last.
    func transportClosed(error: Bool)
    /// The server is shutting down: finish up and close.
    func shouldQuiesce()
    /// Whether the peer has proved who it is. Until then the transport keeps only small
    /// messages (`realtime.unauthenticated_max_payload`): anyone may open a Socket.IO
    /// WebSocket, and a stranger must not make the server hold a megabyte per connection.
    /// Asked only when a message is larger than that bound, so it may take a lock.
    var isAuthenticated: Bool { get }
}

/// Creates the receiver of a WebSocket once its upgrade is done.
public typealias WebSocketAcceptor = @Sendable (any WebSocketTransport) -> any WebSocketReceiver
