/// Whether an upgrade request becomes a WebSocket.
public enum WebSocketDecision: Sendable {
    case accept(WebSocketAcceptor)
    case refuse(WebSocketRefusal)
}
