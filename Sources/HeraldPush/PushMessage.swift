import HeraldCore

/// Everything a provider sender needs for one push to one device, resolved at send time
/// (the badge is the user's unread count at that moment, not when the notification was made;
/// for a push handed over in memory, the count read with the rows that made it, milliseconds
/// before).
public struct PushMessage: Sendable, Equatable {
    /// Also the APNs `apns-id`: a resend after a crash is the same notification to the device.
    public var deliveryID: String
    public var notificationID: String
    public var userID: String
    /// Herald's device record id (not the provider token).
    public var deviceID: String
    public var type: String
    public var severity: Severity
    public var provider: PushProvider
    public var platform: DevicePlatform
    public var token: String
    public var webpushP256dh: String?
    public var webpushAuth: String?
    public var title: String
    public var body: String?
    /// The notification's data object, plus `notification_id` and `type` for the app.
    public var data: JSONValue
    public var category: String?
    public var threadID: String?
    public var collapseKey: String?

    /// What a device uses to show a re-sent copy in place of the first one: the collapse key,
    /// or the notification id when the notification has none.
    ///
    /// Why: a push whose acceptance was not recorded before a crash is sent again once its
    /// lease ends (same `apns-id`), and nothing promises that a provider drops the copy. Keyed
    /// by the notification id, the copy replaces the first on the device (APNs collapse id,
    /// Android notification tag, Web Push notification tag and Topic) instead of showing
    /// twice; distinct notifications never share it.
    public var replacementKey: String { collapseKey ?? notificationID }
    public var interruptionLevel: InterruptionLevel?
    /// The user's unread count (absolute, per Apple's guidance).
    public var badge: Int
    /// Epoch ms after which providers should drop the message; nil means the provider default.
    public var expiresAt: Int64?
    /// The attempt number (1 for the first send).
    public var attempt: Int
    /// A background (content-available) push that shows nothing: APNs push type
    /// `background` at priority 5.
    public var silent: Bool
    /// When the device last registered this token (epoch ms): a provider saying the token
    /// went away *before* this is out of date and must not deactivate the device.
    public var deviceUpdatedAt: Int64?
    /// The app the device belongs to (`push.apps`), whose credentials and topic send it.
    public var app: String = PushRoute.defaultApp
    /// An APNs token's environment; nil: the app's configured one.
    public var apnsEnvironment: APNsEnvironment?
    /// The sending request's `traceparent` (its notification's), which the worker's delivery
    /// span continues. Not sent to the provider.
    public var traceParent: String?

    public init(
        deliveryID: String, notificationID: String, userID: String, deviceID: String, type: String, severity: Severity, provider: PushProvider,
        platform: DevicePlatform, token: String, webpushP256dh: String? = nil, webpushAuth: String? = nil, title: String,
        body: String?, data: JSONValue, category: String? = nil, threadID: String? = nil, collapseKey: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, badge: Int, expiresAt: Int64? = nil, attempt: Int = 1, silent: Bool = false,
        deviceUpdatedAt: Int64? = nil
    ) {
        self.silent = silent
        self.deviceUpdatedAt = deviceUpdatedAt
        self.deliveryID = deliveryID
        self.notificationID = notificationID
        self.userID = userID
        self.deviceID = deviceID
        self.type = type
        self.severity = severity
        self.provider = provider
        self.platform = platform
        self.token = token
        self.webpushP256dh = webpushP256dh
        self.webpushAuth = webpushAuth
        self.title = title
        self.body = body
        self.data = data
        self.category = category
        self.threadID = threadID
        self.collapseKey = collapseKey
        self.interruptionLevel = interruptionLevel
        self.badge = badge
        self.expiresAt = expiresAt
        self.attempt = attempt
    }
}

/// Sends one push through one provider. Implementations classify every answer; a thrown
/// error counts as a retryable failure.
public protocol PushSender: Sendable {
    func send(_ message: PushMessage) async throws -> PushResult
}
