/// Where one delivery stands (`notification_deliveries.status`, stored as the raw value).
///
/// Why one enum for both channels: the table and its indexes are shared, and the worker's
/// and the ack sweeper's `WHERE status = …` guards are what let exactly one of them move a row.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    // socket: awaiting_ack → acknowledged | unacknowledged; or published (no ack wanted)
    case awaitingAck = "awaiting_ack"
    case acknowledged
    case unacknowledged
    case published
    // push: pending → sending → sent | pending (retry) | failed | dead | skipped
    case pending
    case sending
    case sent
    /// The token is gone; the device was deactivated.
    case failed
    /// Dead-lettered: refused by the provider, or the retry policy gave up.
    case dead
    /// Not sent: read, deleted or expired before its turn.
    case skipped

    /// No further attempt will be made.
    public var isFinal: Bool {
        switch self {
        case .awaitingAck, .pending, .sending: false
        default: true
        }
    }
}

/// How a delivery reaches the user (`notification_deliveries.channel`).
public enum DeliveryChannel: String, Sendable, Codable, CaseIterable {
    /// The user's live sockets, waiting for the client's ack when the type asks for one.
    case socket
    /// One push device.
    case push
}
