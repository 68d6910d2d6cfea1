/// The database cannot be reached: no connection could be had within the acquire timeout, or
/// the connection broke (the server restarting, a failover, the network).
///
/// Why a type of its own: it is the one database failure a client should simply retry (the
/// server answers 503 with `Retry-After`), unlike a constraint or a bug (500). An operation
/// that failed this way may or may not have committed if the break came during `COMMIT`;
/// `Idempotency-Key` makes the retry safe.
public struct DatabaseUnavailable: Error, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// No pooled connection became free or could be opened in time.
        case noConnection
        /// An open connection closed or was refused mid-operation.
        case connectionLost
    }

    public let reason: Reason

    public init(_ reason: Reason) {
        self.reason = reason
    }
}
