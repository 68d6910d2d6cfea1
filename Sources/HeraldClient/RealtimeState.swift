/// Where the connection is, for a status line in the app.
public enum RealtimeState: Sendable, Equatable {
    case connecting
    case connected
    /// Disconnected; the next attempt is in `retryIn`.
    case waiting(retryIn: Duration)
    case stopped
}
