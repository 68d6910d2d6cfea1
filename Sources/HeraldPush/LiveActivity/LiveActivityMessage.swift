import HeraldCore

/// What an ActivityKit push does to a Live Activity (`aps.event`).
public enum LiveActivityEvent: String, Sendable, Codable, CaseIterable {
    /// Starts an activity on a device, sent to its push-to-start token.
    case start
    /// Replaces the content state of a running activity.
    case update
    /// Ends it; it stays on the lock screen until its dismissal date.
    case end
}

/// The alert an ActivityKit push may carry: the activity expands (and the phone sounds) to
/// show a change a person must see now. Only important changes carry one.
public struct LiveActivityAlert: Sendable, Equatable, Codable {
    public var title: String
    public var body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// One ActivityKit push to one token: everything the sender needs, resolved by the worker.
public struct LiveActivityMessage: Sendable, Equatable {
    /// Unique per push (the activity and the version of its content): the APNs `apns-id` is
    /// derived from it, so a resend after a crash is the same push.
    public var pushID: String
    /// Herald's record of the activity (never the token), for logs.
    public var activityID: String
    public var app: String = PushRoute.defaultApp
    public var environment: APNsEnvironment?
    /// The activity's update token, or for `start` the push-to-start token.
    public var token: String
    public var event: LiveActivityEvent
    /// Epoch seconds of the content: the device ignores a push older than what it shows.
    public var timestamp: Int64
    public var contentState: JSONValue
    /// Epoch seconds after which the device shows the content as outdated.
    public var staleDate: Int64?
    /// Epoch seconds at which an ended activity leaves the lock screen.
    public var dismissalDate: Int64?
    public var alert: LiveActivityAlert?
    /// For `start`: the app's `ActivityAttributes` type name and its static attributes.
    public var attributesType: String?
    public var attributes: JSONValue?
    /// Priority 10 (delivered at once, counted against Apple's budget) instead of 5.
    public var important: Bool
    /// When the token was last registered (epoch ms): an older "gone" answer is ignored.
    public var tokenUpdatedAt: Int64?

    public init(
        pushID: String, activityID: String, app: String = PushRoute.defaultApp, environment: APNsEnvironment? = nil, token: String,
        event: LiveActivityEvent, timestamp: Int64, contentState: JSONValue, staleDate: Int64? = nil, dismissalDate: Int64? = nil,
        alert: LiveActivityAlert? = nil, attributesType: String? = nil, attributes: JSONValue? = nil, important: Bool,
        tokenUpdatedAt: Int64? = nil
    ) {
        self.pushID = pushID
        self.activityID = activityID
        self.app = app
        self.environment = environment
        self.token = token
        self.event = event
        self.timestamp = timestamp
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.alert = alert
        self.attributesType = attributesType
        self.attributes = attributes
        self.important = important
        self.tokenUpdatedAt = tokenUpdatedAt
    }
}

/// Sends ActivityKit pushes. Only APNs has them (and the log sender, which records them).
public protocol LiveActivitySender: Sendable {
    func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult
}
