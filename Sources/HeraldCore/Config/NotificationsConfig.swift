/// A notification type's defaults, from the config file (or built in).
public struct NotificationTypeConfig: Codable, Sendable, Equatable {
    /// `info`, `warning` or `alert`.
    public var severity: String
    /// `push` or `in_app`.
    public var delivery: String
    /// Whether users who never chose get it (an opt-in type says false).
    public var defaultEnabled: Bool
    /// The actionable-push category (`VOLUME_ADJUSTMENT`).
    public var category: String?
    /// `passive`, `active`, `time-sensitive` or `critical`.
    public var interruptionLevel: String?
    /// Users cannot opt out, and quiet hours and the severity floor do not hold it back.
    public var critical: Bool
    /// Push even when the user's app holds a socket (the socket gets it too): for actionable
    /// pushes whose buttons belong on the lock screen (`volume_adjustment`).
    public var pushWhileOnline: Bool
    /// Repeats of the same (user, dedupe key) within this many seconds return the first
    /// notification instead of a new one; nil means the global default.
    public var dedupeCooldownSeconds: Int?

    enum CodingKeys: String, CodingKey {
        case severity, delivery, category, critical
        case defaultEnabled = "default_enabled"
        case interruptionLevel = "interruption_level"
        case pushWhileOnline = "push_while_online"
        case dedupeCooldownSeconds = "dedupe_cooldown_seconds"
    }

    public init(
        severity: String = "info", delivery: String = "push", defaultEnabled: Bool = true, category: String? = nil,
        interruptionLevel: String? = nil, critical: Bool = false, dedupeCooldownSeconds: Int? = nil, pushWhileOnline: Bool = false
    ) {
        self.pushWhileOnline = pushWhileOnline
        self.severity = severity
        self.delivery = delivery
        self.defaultEnabled = defaultEnabled
        self.category = category
        self.interruptionLevel = interruptionLevel
        self.critical = critical
        self.dedupeCooldownSeconds = dedupeCooldownSeconds
    }

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&severity, .severity)
        try c.override(&delivery, .delivery)
        try c.override(&defaultEnabled, .defaultEnabled)
        try c.override(&category, .category)
        try c.override(&interruptionLevel, .interruptionLevel)
        try c.override(&critical, .critical)
        try c.override(&pushWhileOnline, .pushWhileOnline)
        try c.override(&dedupeCooldownSeconds, .dedupeCooldownSeconds)
    }
}

/// The notifications module: types, routing and dedupe.
public struct NotificationsConfig: Codable, Sendable, Equatable {
    /// Types besides (or overriding) the built-in ones, keyed by name.
    public var types: [String: NotificationTypeConfig] = [:]
    /// A `push` notification sent over a socket falls back to push when the client has not
    /// acknowledged it within this time (its app was backgrounded with the socket open).
    public var ackTimeoutMs = 5_000
    /// Default dedupe cooldown (seed 003: 30 minutes).
    public var dedupeCooldownSeconds = 1_800
    /// Most recipients of one `POST /notifications`.
    public var maxRecipients = 1_000
    /// Unread notifications sent in one `sync`.
    public var syncLimit = 100

    enum CodingKeys: String, CodingKey {
        case types
        case ackTimeoutMs = "ack_timeout_ms"
        case dedupeCooldownSeconds = "dedupe_cooldown_seconds"
        case maxRecipients = "max_recipients"
        case syncLimit = "sync_limit"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&types, .types)
        try c.override(&ackTimeoutMs, .ackTimeoutMs)
        try c.override(&dedupeCooldownSeconds, .dedupeCooldownSeconds)
        try c.override(&maxRecipients, .maxRecipients)
        try c.override(&syncLimit, .syncLimit)
    }
}

/// The push delivery worker.
public struct PushConfig: Codable, Sendable, Equatable {
    /// Run the delivery worker on this node (turn off on nodes that only serve clients).
    public var workerEnabled = true
    /// Pushes in flight at once per node.
    public var concurrency = 32
    /// Deliveries claimed per database round trip.
    public var batchSize = 100
    /// How often an idle worker looks for due deliveries written by other nodes.
    public var pollIntervalMs = 500
    /// A claimed delivery whose worker died is retried after this lease.
    public var leaseSeconds = 60
    /// Deadline of one provider request.
    public var requestTimeoutMs = 10_000
    /// Attempts before a delivery is dead-lettered…
    public var maxAttempts = 8
    /// …or this age, whichever comes first.
    public var maxAgeSeconds = 86_400
    /// Exponential backoff: first retry after this, doubling up to `retry_max_ms`, with jitter.
    public var retryBaseMs = 1_000
    public var retryMaxMs = 600_000
    /// The log sender (used for providers that are not configured) appends one JSON line per
    /// push here.
    public var logFile: String?
    /// Providers; one left out is served by the log sender.
    public var apns: APNsConfig?
    public var fcm: FCMConfig?
    public var webpush: WebPushConfig?

    enum CodingKeys: String, CodingKey {
        case concurrency
        case workerEnabled = "worker_enabled"
        case batchSize = "batch_size"
        case pollIntervalMs = "poll_interval_ms"
        case leaseSeconds = "lease_seconds"
        case requestTimeoutMs = "request_timeout_ms"
        case maxAttempts = "max_attempts"
        case maxAgeSeconds = "max_age_seconds"
        case retryBaseMs = "retry_base_ms"
        case retryMaxMs = "retry_max_ms"
        case logFile = "log_file"
        case apns, fcm, webpush
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.override(&workerEnabled, .workerEnabled)
        try c.override(&concurrency, .concurrency)
        try c.override(&batchSize, .batchSize)
        try c.override(&pollIntervalMs, .pollIntervalMs)
        try c.override(&leaseSeconds, .leaseSeconds)
        try c.override(&requestTimeoutMs, .requestTimeoutMs)
        try c.override(&maxAttempts, .maxAttempts)
        try c.override(&maxAgeSeconds, .maxAgeSeconds)
        try c.override(&retryBaseMs, .retryBaseMs)
        try c.override(&retryMaxMs, .retryMaxMs)
        try c.override(&logFile, .logFile)
        try c.override(&apns, .apns)
        try c.override(&fcm, .fcm)
        try c.override(&webpush, .webpush)
    }
}
