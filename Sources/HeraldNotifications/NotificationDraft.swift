import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage

/// What a backend (or a domain module) asks Herald to notify: one type, one content, one or
/// many users. Optional fields fall back to the type's defaults.
public struct NotificationDraft: Sendable, Equatable {
    public var userIDs: [String]
    public var type: String
    public var title: String
    public var body: String?
    public var data: [String: JSONValue]
    public var severity: Severity?
    public var delivery: DeliveryMode?
    public var category: String?
    public var threadID: String?
    public var collapseKey: String?
    public var dedupeKey: String?
    /// Seconds after which an undelivered push is dropped (0: now or never).
    public var ttlSeconds: Int?
    /// A background (content-available) push that wakes the app to sync and shows nothing:
    /// pushed to every device even while the app is connected, never on the socket or in
    /// the inbox.
    public var silent: Bool
    /// This send's APNs interruption level (`passive`, `active`, `time-sensitive`), in place
    /// of the type's: a transit alert is time-sensitive only when its severity warrants it.
    /// The user's settings still lower `time-sensitive` to `active` when they have not allowed it.
    public var interruptionLevel: InterruptionLevel?

    public init(
        userIDs: [String], type: String, title: String, body: String? = nil, data: [String: JSONValue] = [:],
        severity: Severity? = nil, delivery: DeliveryMode? = nil, category: String? = nil, threadID: String? = nil,
        collapseKey: String? = nil, dedupeKey: String? = nil, ttlSeconds: Int? = nil, silent: Bool = false, interruptionLevel: InterruptionLevel? = nil
    ) {
        self.silent = silent
        self.interruptionLevel = interruptionLevel
        self.userIDs = userIDs
        self.type = type
        self.title = title
        self.body = body
        self.data = data
        self.severity = severity
        self.delivery = delivery
        self.category = category
        self.threadID = threadID
        self.collapseKey = collapseKey
        self.dedupeKey = dedupeKey
        self.ttlSeconds = ttlSeconds
    }

    public static let maxTitleLength = 255
    public static let maxBodyLength = 4000
    public static let maxDataBytes = 16_384
    /// APNs refuses longer `apns-collapse-id` values.
    public static let maxCollapseKeyBytes = 64
    public static let maxDedupeKeyLength = 200
    /// FCM's longest time to live (28 days).
    public static let maxTTLSeconds = 2_419_200

    /// Every problem with the draft, named by JSON field (422 `VALIDATION_FAILED`).
    public func validate(catalog: NotificationTypeCatalog, maxRecipients: Int) throws {
        var v = FieldValidator()
        v.check(!userIDs.isEmpty, "user_ids", "must name at least one user")
        v.check(userIDs.count <= maxRecipients, "user_ids", "must name at most \(maxRecipients) users")
        for (index, user) in userIDs.enumerated() where !Self.isValidUserID(user) {
            v.fail("user_ids[\(index)]", "must be 1 to 128 printable characters")
        }
        if catalog[type] == nil {
            v.fail("type", "is not a notification type; known types: \(catalog.names.joined(separator: ", "))")
        }
        let trimmedTitle = title.trimmingCharacters(in: .whitespacesAndNewlines)
        v.check(!trimmedTitle.isEmpty, "title", "must not be empty")
        v.check(title.count <= Self.maxTitleLength, "title", "must be at most \(Self.maxTitleLength) characters")
        if let body { v.check(body.count <= Self.maxBodyLength, "body", "must be at most \(Self.maxBodyLength) characters") }
        let dataBytes = (try? JSONEncoder().encode(JSONValue.object(data)).count) ?? Int.max
        v.check(dataBytes <= Self.maxDataBytes, "data", "must be at most \(Self.maxDataBytes) bytes of JSON")
        for key in data.keys.sorted() {
            if let refusal = PushDataKeys.refusal(key) { v.fail("data.\(key)", refusal) }
        }
        if let category { v.check((1...64).contains(category.utf8.count), "category", "must be 1 to 64 bytes") }
        if let threadID { v.check((1...64).contains(threadID.utf8.count), "thread_id", "must be 1 to 64 bytes") }
        if let collapseKey {
            v.check((1...Self.maxCollapseKeyBytes).contains(collapseKey.utf8.count), "collapse_key", "must be 1 to 64 bytes")
        }
        if let dedupeKey {
            v.check((1...Self.maxDedupeKeyLength).contains(dedupeKey.count), "dedupe_key", "must be 1 to 200 characters")
        }
        if let ttlSeconds {
            v.check((0...Self.maxTTLSeconds).contains(ttlSeconds), "ttl_seconds", "must be between 0 and \(Self.maxTTLSeconds)")
        }
        // `critical` needs Apple's entitlement and a type configured critical.
        v.check(interruptionLevel != .critical, "interruption_level", "must be passive, active or time-sensitive")
        try v.validate()
    }

    static func isValidUserID(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }
}

/// What happened to a draft for one user.
public struct SendOutcome: Sendable, Equatable {
    public var notification: NotificationRecord
    /// True when a notification with the same dedupe key was sent within the cooldown; this is it.
    public var deduplicated: Bool
    public var channel: SendChannel
    public var pushDeliveries: Int
    public var pushSuppressed: PushSuppression?
}
