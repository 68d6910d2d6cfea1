import HeraldCore

/// The keys of a push's custom data that belong to Herald or to a provider, and how Herald
/// adds its own.
///
/// Why a sender's data is never rewritten: apps route a tapped push on what their server put
/// in it (the dispatch design sends `type: "job:new"` to drivers and `type: "job_update"` to customers),
/// so a value Herald replaced would send the tap to the wrong screen. Herald's own keys are
/// therefore names a sender may not use, refused when the notification is created (422)
/// rather than dropped or overwritten at send time:
/// - `notification_id`: the inbox id, which the app marks read with;
/// - `notification_type`: the catalog type (`job_new`, `driver_assigned`), always present.
///
/// `type` is the sender's when the data has one; otherwise Herald fills it with the catalog
/// type, which is what the notification design's clients read.
///
/// Provider-reserved names are refused for the same reason: `aps` is Apple's dictionary, and
/// FCM refuses a whole message with `from`, `message_type` or a key starting with `google` or
/// `gcm`.
public enum PushDataKeys {
    public static let notificationID = "notification_id"
    public static let notificationType = "notification_type"
    public static let type = "type"

    /// Why `key` may not appear in a notification's data, or nil when it may.
    public static func refusal(_ key: String) -> String? {
        if key == notificationID || key == notificationType { return "is set by Herald (reserved key)" }
        if key == "aps" { return "is reserved by APNs" }
        if isReservedByFCM(key) { return "is reserved by FCM (from, message_type, google…, gcm…)" }
        return nil
    }

    /// The keys `refusal` refuses, as an ECMA-262 pattern for the OpenAPI document (which has
    /// no case-insensitive flag, hence the letter classes).
    public static let reservedKeyPattern =
        "^(notification_id|notification_type|aps|[fF][rR][oO][mM]|[mM][eE][sS][sS][aA][gG][eE]_[tT][yY][pP][eE])$|^([gG][oO][oO][gG][lL][eE]|[gG][cC][mM])"

    static func isReservedByFCM(_ key: String) -> Bool {
        let lower = key.lowercased()
        return lower == "from" || lower == "message_type" || lower.hasPrefix("google") || lower.hasPrefix("gcm")
    }

    /// The data a device receives: the sender's keys unchanged, Herald's added.
    public static func adding(to data: [String: JSONValue], notificationID: String, type: String) -> [String: JSONValue] {
        var result = data
        result[Self.notificationID] = .string(notificationID)
        result[notificationType] = .string(type)
        if result[Self.type] == nil { result[Self.type] = .string(type) }
        return result
    }
}
