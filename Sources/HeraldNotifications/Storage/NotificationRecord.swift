import HeraldPush

/// One notification in a user's inbox, as stored. Severity and delivery are the
/// notifications module's enums, kept here as their raw strings.
public struct NotificationRecord: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    public var type: String
    public var severity: Severity
    public var delivery: DeliveryMode
    public var title: String
    public var body: String?
    /// Type-specific payload as compact JSON text (an object).
    public var data: String
    public var category: String?
    public var threadID: String?
    public var collapseKey: String?
    public var dedupeKey: String?
    public var interruptionLevel: InterruptionLevel?
    /// Past this instant (epoch ms) the notification is no longer pushed.
    public var expiresAt: Int64?
    public var createdAt: Int64
    public var readAt: Int64?
    public var deletedAt: Int64?
    /// Nil: not delivered by any channel yet.
    public var sentVia: SentVia?
    /// Why push was not used, if so.
    public var pushSuppressed: PushSuppression?
    /// 1: a silent (content-available) push that syncs the app; never in the inbox.
    public var silent: Int
    /// The `traceparent` of the request that sent it (nil: not traced), continued by every
    /// delivery of it: a worker's push hours later is still in the sender's trace.
    public var traceParent: String?

    public init(
        id: String, userID: String, type: String, severity: Severity, delivery: DeliveryMode, title: String, body: String?,
        data: String, category: String? = nil, threadID: String? = nil, collapseKey: String? = nil, dedupeKey: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, expiresAt: Int64? = nil, createdAt: Int64, readAt: Int64? = nil,
        deletedAt: Int64? = nil, sentVia: SentVia? = nil, pushSuppressed: PushSuppression? = nil, silent: Bool = false,
        traceParent: String? = nil
    ) {
        self.traceParent = traceParent
        self.silent = silent ? 1 : 0
        self.id = id
        self.userID = userID
        self.type = type
        self.severity = severity
        self.delivery = delivery
        self.title = title
        self.body = body
        self.data = data
        self.category = category
        self.threadID = threadID
        self.collapseKey = collapseKey
        self.dedupeKey = dedupeKey
        self.interruptionLevel = interruptionLevel
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.readAt = readAt
        self.deletedAt = deletedAt
        self.sentVia = sentVia
        self.pushSuppressed = pushSuppressed
    }

    enum CodingKeys: String, CodingKey {
        case id, type, severity, delivery, title, body, data, category, silent
        case userID = "user_id"
        case threadID = "thread_id"
        case collapseKey = "collapse_key"
        case dedupeKey = "dedupe_key"
        case interruptionLevel = "interruption_level"
        case expiresAt = "expires_at"
        case createdAt = "created_at"
        case readAt = "read_at"
        case deletedAt = "deleted_at"
        case sentVia = "sent_via"
        case pushSuppressed = "push_suppressed"
        case traceParent = "trace_parent"
    }
}
