import HeraldPush

/// One planned delivery of a notification: to the user's sockets (waiting for the client's
/// ack) or to one push device.
public struct DeliveryRecord: Sendable, Equatable, Codable {
    public var id: String
    public var notificationID: String
    public var userID: String
    public var channel: DeliveryChannel
    public var deviceID: String?
    public var provider: PushProvider?
    public var status: DeliveryStatus
    public var attempts: Int
    /// When the row is next due: the ack deadline, or the next push attempt.
    public var nextAttemptAt: Int64
    public var leaseUntil: Int64?
    public var providerMessageID: String?
    public var reason: String?
    public var latencyMs: Int?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var completedAt: Int64?

    public init(
        id: String, notificationID: String, userID: String, channel: DeliveryChannel, deviceID: String? = nil, provider: PushProvider? = nil,
        status: DeliveryStatus, attempts: Int = 0, nextAttemptAt: Int64, leaseUntil: Int64? = nil, providerMessageID: String? = nil,
        reason: String? = nil, latencyMs: Int? = nil, createdAt: Int64, updatedAt: Int64, completedAt: Int64? = nil
    ) {
        self.id = id
        self.notificationID = notificationID
        self.userID = userID
        self.channel = channel
        self.deviceID = deviceID
        self.provider = provider
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.leaseUntil = leaseUntil
        self.providerMessageID = providerMessageID
        self.reason = reason
        self.latencyMs = latencyMs
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.completedAt = completedAt
    }

    /// Claimed for its first attempt by the node that writes it (`PushHandoff`): `sending`
    /// until `leaseUntil`, which is also when it is next due (the expired-lease claim reads
    /// `next_attempt_at` through its index).
    mutating func claim(leaseUntil: Int64) {
        status = .sending
        attempts = 1
        self.leaseUntil = leaseUntil
        nextAttemptAt = leaseUntil
    }

    enum CodingKeys: String, CodingKey {
        case id, channel, provider, status, attempts, reason
        case notificationID = "notification_id"
        case userID = "user_id"
        case deviceID = "device_id"
        case nextAttemptAt = "next_attempt_at"
        case leaseUntil = "lease_until"
        case providerMessageID = "provider_message_id"
        case latencyMs = "latency_ms"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case completedAt = "completed_at"
    }
}
