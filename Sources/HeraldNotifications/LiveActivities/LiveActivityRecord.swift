import Foundation
import HeraldCore
import HeraldPush

/// One Live Activity on one device (`live_activities`): its token, the content it should
/// show, and what was pushed of it.
///
/// Why versions and not a queue of pushes: an activity shows one content state, so a change
/// replaces the last one not yet sent (the coalescing Apple's update budget needs). `version`
/// counts changes, `sent_version` is the last one APNs took; a change at or above
/// `important_version` / `alert_version` makes the next push priority 10 / carry the alert.
public struct LiveActivityRecord: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    public var appID: String
    public var kind: LiveActivityKind
    public var subjectID: String
    /// The app's id for the activity (ActivityKit's `Activity.id`); nil for a start row.
    public var activityID: String?
    public var mode: LiveActivityMode
    public var token: String
    public var environment: APNsEnvironment?
    public var tokenUpdatedAt: Int64
    public var status: LiveActivityStatus
    /// The content state as JSON text (an object).
    public var content: String
    /// A start row's attributes as JSON text.
    public var attributes: String?
    public var version: Int64
    public var sentVersion: Int64
    public var importantVersion: Int64
    /// The pending alert as JSON text, and the version that set it.
    public var alert: String?
    public var alertVersion: Int64
    /// 1 when an end is pending or sent: no further change applies (an integer column, as
    /// both engines store it).
    public var ending: Int
    public var isEnding: Bool { ending != 0 }
    /// When the newest content was made (epoch ms): the push's `timestamp`.
    public var contentAt: Int64
    /// The `timestamp` (epoch s) of the last push APNs took.
    public var sentTimestamp: Int64?
    public var dismissalAt: Int64?
    /// When the next push is due (epoch ms); nil when nothing is pending. A claimed row is
    /// due again at its lease's end, so a node that died mid-send leaves nothing stuck.
    public var dueAt: Int64?
    public var leaseUntil: Int64?
    public var attempts: Int
    public var sentCount: Int
    public var lastSentAt: Int64?
    public var reason: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, kind, mode, token, environment, status, content, attributes, version, alert, ending, attempts, reason
        case userID = "user_id"
        case appID = "app_id"
        case subjectID = "subject_id"
        case activityID = "activity_id"
        case tokenUpdatedAt = "token_updated_at"
        case sentVersion = "sent_version"
        case importantVersion = "important_version"
        case alertVersion = "alert_version"
        case contentAt = "content_at"
        case sentTimestamp = "sent_timestamp"
        case dismissalAt = "dismissal_at"
        case dueAt = "due_at"
        case leaseUntil = "lease_until"
        case sentCount = "sent_count"
        case lastSentAt = "last_sent_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    public init(
        id: String, userID: String, appID: String, kind: LiveActivityKind, subjectID: String, activityID: String?, mode: LiveActivityMode,
        token: String, environment: APNsEnvironment?, content: [String: JSONValue], attributes: [String: JSONValue]? = nil, now: Int64
    ) {
        self.id = id
        self.userID = userID
        self.appID = appID
        self.kind = kind
        self.subjectID = subjectID
        self.activityID = activityID
        self.mode = mode
        self.token = token
        self.environment = environment
        tokenUpdatedAt = now
        status = .active
        self.content = Self.text(.object(content))
        self.attributes = attributes.map { Self.text(.object($0)) }
        version = 0
        sentVersion = 0
        importantVersion = 0
        alert = nil
        alertVersion = 0
        ending = 0
        contentAt = now
        sentTimestamp = nil
        dismissalAt = nil
        dueAt = nil
        leaseUntil = nil
        attempts = 0
        sentCount = 0
        lastSentAt = nil
        reason = nil
        createdAt = now
        updatedAt = now
    }

    public var contentObject: [String: JSONValue] {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(content.utf8)) else { return [:] }
        return object
    }

    public var pendingAlert: LiveActivityAlert? {
        guard let alert, alertVersion > sentVersion else { return nil }
        return try? JSONDecoder().decode(LiveActivityAlert.self, from: Data(alert.utf8))
    }

    static func text(_ value: JSONValue) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.write(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func text(_ alert: LiveActivityAlert) -> String {
        text(["title": .string(alert.title), "body": .string(alert.body)])
    }
}
