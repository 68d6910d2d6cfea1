import HeraldPush

/// A registered push target: an APNs or FCM token, or a Web Push subscription (whose token
/// is its endpoint).
public struct DeviceRecord: Sendable, Equatable, Codable {
    public var id: String
    public var userID: String
    public var provider: PushProvider
    public var token: String
    public var platform: DevicePlatform
    public var deviceID: String?
    public var appVersion: String?
    public var osVersion: String?
    public var locale: String?
    public var userAgent: String?
    public var webpushP256dh: String?
    public var webpushAuth: String?
    public var createdAt: Int64
    public var lastUsedAt: Int64
    public var deactivatedAt: Int64?
    public var deactivationReason: String?
    /// The app it belongs to (`push.apps`), whose credentials and topic push to it.
    public var appID: String = PushApps.defaultID
    /// An APNs token's environment; nil: the app's configured one.
    public var apnsEnvironment: APNsEnvironment?

    public var isActive: Bool { deactivatedAt == nil }

    public init(
        id: String, userID: String, provider: PushProvider, token: String, platform: DevicePlatform, deviceID: String? = nil,
        appVersion: String? = nil, osVersion: String? = nil, locale: String? = nil, userAgent: String? = nil,
        webpushP256dh: String? = nil, webpushAuth: String? = nil, createdAt: Int64, lastUsedAt: Int64,
        deactivatedAt: Int64? = nil, deactivationReason: String? = nil
    ) {
        self.id = id
        self.userID = userID
        self.provider = provider
        self.token = token
        self.platform = platform
        self.deviceID = deviceID
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.locale = locale
        self.userAgent = userAgent
        self.webpushP256dh = webpushP256dh
        self.webpushAuth = webpushAuth
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.deactivatedAt = deactivatedAt
        self.deactivationReason = deactivationReason
    }

    enum CodingKeys: String, CodingKey {
        case id, provider, token, platform, locale
        case userID = "user_id"
        case deviceID = "device_id"
        case appVersion = "app_version"
        case osVersion = "os_version"
        case userAgent = "user_agent"
        case webpushP256dh = "webpush_p256dh"
        case webpushAuth = "webpush_auth"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case deactivatedAt = "deactivated_at"
        case appID = "app_id"
        case apnsEnvironment = "apns_environment"
        case deactivationReason = "deactivation_reason"
    }
}
