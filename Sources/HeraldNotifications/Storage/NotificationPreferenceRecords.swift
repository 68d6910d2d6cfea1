/// A user's notification settings that apply to every type.
public struct NotificationSettingsRecord: Sendable, Equatable {
    public var userID: String
    public var quietHoursEnabled: Bool
    /// "HH:MM" local time, or nil.
    public var quietStart: String?
    public var quietEnd: String?
    public var severityFloor: String
    public var timeSensitiveAllowed: Bool
    public var updatedAt: Int64

    public init(
        userID: String, quietHoursEnabled: Bool, quietStart: String?, quietEnd: String?, severityFloor: String,
        timeSensitiveAllowed: Bool, updatedAt: Int64
    ) {
        self.userID = userID
        self.quietHoursEnabled = quietHoursEnabled
        self.quietStart = quietStart
        self.quietEnd = quietEnd
        self.severityFloor = severityFloor
        self.timeSensitiveAllowed = timeSensitiveAllowed
        self.updatedAt = updatedAt
    }
}

/// A user's choice for one notification type.
public struct TypePreferenceRecord: Sendable, Equatable {
    public var type: String
    public var inAppEnabled: Bool
    public var pushEnabled: Bool
    /// This type's own quiet hours (`HH:MM` local), replacing the user's window; nil: none.
    public var quietStart: String?
    public var quietEnd: String?

    public init(type: String, inAppEnabled: Bool, pushEnabled: Bool, quietStart: String? = nil, quietEnd: String? = nil) {
        self.type = type
        self.quietStart = quietStart
        self.quietEnd = quietEnd
        self.inAppEnabled = inAppEnabled
        self.pushEnabled = pushEnabled
    }
}
