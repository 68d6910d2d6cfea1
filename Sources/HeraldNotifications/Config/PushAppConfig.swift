import HeraldCore
import HeraldPush

/// One app of a deployment (`push.apps`): its id, which devices register with, and its own
/// providers (APNs key and topic, Firebase project, VAPID keys). A provider left out is
/// served by the log sender, as for the default app.
public struct PushAppConfig: ConfigSection, Sendable, Equatable {
    /// `driver`, `customer`: 1–64 of a-z, 0-9, `-` and `_`.
    public var id = ""
    public var apns: APNsConfig?
    public var fcm: FCMConfig?
    public var webpush: WebPushConfig?

    public init() {}

    public init(id: String, apns: APNsConfig? = nil, fcm: FCMConfig? = nil, webpush: WebPushConfig? = nil) {
        self.id = id
        self.apns = apns
        self.fcm = fcm
        self.webpush = webpush
    }

    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}
