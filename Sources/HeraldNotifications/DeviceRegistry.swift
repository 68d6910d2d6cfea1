import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage

/// Registers and retires the push targets of a user (the notification design's `/push/register`).
public struct DeviceRegistry: Sendable {
    let database: any Database
    let clock: any HeraldClock
    /// The apps a device may name (`push.apps` and `default`).
    let apps: Set<String>

    public init(database: any Database, clock: any HeraldClock, apps: Set<String> = [PushApps.defaultID]) {
        self.database = database
        self.clock = clock
        self.apps = apps
    }

    static let fields: Set<String> = [
        "token", "fcm_token", "provider", "platform", "device_id", "app_version", "os_version", "locale", "subscription", "app_id", "environment",
    ]

    /// Validates a registration body and stores it for `userID`. Accepts the notification
    /// design's `fcm_token` as `token` (provider `fcm`), and a browser `PushSubscription.toJSON()` as
    /// `subscription` (provider `webpush`; the endpoint is the token).
    public func register(userID: String, body: [String: JSONValue], userAgent: String?) async throws -> (device: DeviceRecord, created: Bool) {
        var r = FieldReader(body)
        r.refuseUnknown(Self.fields)
        let fcmToken = r.string("fcm_token", maxLength: 4096)
        var token = r.string("token", maxLength: 4096) ?? fcmToken
        let providerText = r.string("provider", maxLength: 16) ?? (fcmToken != nil ? "fcm" : (body["subscription"] != nil ? "webpush" : nil))
        let platformText = r.string("platform", maxLength: 16, required: true)
        let deviceID = r.string("device_id", maxLength: 200)
        let appVersion = r.string("app_version", maxLength: 64)
        let osVersion = r.string("os_version", maxLength: 64)
        let locale = r.string("locale", maxLength: 35)
        let subscriptionObject = r.object("subscription")
        let app = r.string("app_id", maxLength: 64) ?? PushApps.defaultID
        let environmentText = r.string("environment", maxLength: 16)
        if !apps.contains(app) { r.fail("app_id", "must be one of this server's apps: \(apps.sorted().joined(separator: ", "))") }
        let environment = environmentText.flatMap(APNsEnvironment.init(rawValue:))
        let provider = providerText.flatMap(PushProvider.init(rawValue:))
        let platform = platformText.flatMap(DevicePlatform.init(rawValue:))
        if providerText == nil {
            r.fail("provider", "is required: apns, fcm or webpush")
        } else if provider == nil {
            r.fail("provider", "must be apns, fcm or webpush")
        }
        if platformText != nil && platform == nil { r.fail("platform", "must be ios, android or web") }
        if let provider, let platform {
            for problem in DeviceTokenRules.platformProblems(provider: provider, platform: platform) { r.fail("platform", problem) }
        }
        var subscription: WebPushSubscription?
        if provider == .webpush {
            if let subscriptionObject {
                var s = FieldReader(subscriptionObject)
                s.refuseUnknown(["endpoint", "keys", "expirationTime"], prefix: "subscription.")
                let endpoint = s.string("endpoint", maxLength: 2048, required: true, prefix: "subscription.")
                let keys = s.object("keys", prefix: "subscription.")
                if keys == nil { s.fail("subscription.keys", "is required: {p256dh, auth}") }
                var k = FieldReader(keys ?? [:])
                let p256dh = k.string("p256dh", maxLength: 200, required: keys != nil, prefix: "subscription.keys.")
                let auth = k.string("auth", maxLength: 100, required: keys != nil, prefix: "subscription.keys.")
                s.merge(k)
                r.merge(s)
                if let endpoint, let p256dh, let auth {
                    let (valid, problems) = WebPushSubscription.validate(endpoint: endpoint, p256dh: p256dh, auth: auth)
                    for problem in problems { r.fail(problem.field, problem.message) }
                    subscription = valid
                }
                if let given = token, let endpoint, given != endpoint {
                    r.fail("token", "must equal subscription.endpoint for webpush (or be left out)")
                }
                token = endpoint
            } else {
                r.fail("subscription", "is required for webpush: {endpoint, keys: {p256dh, auth}}")
            }
        } else if subscriptionObject != nil {
            r.fail("subscription", "is only for provider webpush")
        }
        if environmentText != nil {
            if provider != .apns {
                r.fail("environment", "is only for provider apns")
            } else if environment == nil {
                r.fail("environment", "must be production or sandbox")
            }
        }
        if token == nil && provider != .webpush { r.fail("token", "is required") }
        if let token, let provider, provider != .webpush {
            for problem in DeviceTokenRules.problems(token: token, provider: provider) { r.fail("token", problem) }
        }
        try r.validate()
        guard let provider, let platform, let token else { throw APIError.validation([FieldError(field: "token", message: "is required")]) }
        let now = clock.now().epochMilliseconds
        var record = DeviceRecord(
            id: Identifier.make("dev"), userID: userID, provider: provider,
            token: DeviceTokenRules.normalized(token: token, provider: provider), platform: platform, deviceID: deviceID,
            appVersion: appVersion, osVersion: osVersion, locale: locale, userAgent: userAgent.map { String($0.prefix(512)) },
            webpushP256dh: subscription?.p256dh, webpushAuth: subscription?.auth, createdAt: now, lastUsedAt: now)
        record.appID = app
        record.apnsEnvironment = environment
        return try await database.transaction { [record] db in try await DeviceStore().register(db, record, now: now) }
    }

    /// Deactivates the caller's token; nil when the caller has no such token.
    public func unregister(userID: String, body: [String: JSONValue]) async throws -> DeviceRecord? {
        var r = FieldReader(body)
        r.refuseUnknown(["token", "fcm_token", "provider"])
        let token = r.string("token", maxLength: 4096) ?? r.string("fcm_token", maxLength: 4096)
        if token == nil { r.fail("token", "is required") }
        try r.validate()
        guard let token else { return nil }
        let now = clock.now().epochMilliseconds
        return try await database.withConnection { db in
            if let device = try await DeviceStore().unregister(db, userID: userID, token: token, now: now) { return device }
            // APNs tokens are stored lower-case.
            return try await DeviceStore().unregister(db, userID: userID, token: token.lowercased(), now: now)
        }
    }

    public func devices(userID: String) async throws -> [DeviceRecord] {
        try await database.withConnection { db in try await DeviceStore().devices(db, userID: userID, activeOnly: false) }
    }

    /// The user's active devices and unread count (the badge): what `herald push-test` sends to.
    public func pushTargets(userID: String) async throws -> (devices: [DeviceRecord], badge: Int) {
        try await database.withConnection { db in
            (try await DeviceStore().devices(db, userID: userID, activeOnly: true), try await NotificationStore().unreadCount(db, userID: userID))
        }
    }

    /// Delivery attempts for operators (`GET /api/v1/deliveries`), newest first.
    public func deliveries(notificationID: String?, status: DeliveryStatus?, limit: Int) async throws -> [DeliveryRecord] {
        try await database.withConnection { db in
            try await DeliveryStore().list(db, notificationID: notificationID, status: status, limit: limit)
        }
    }

    public static func json(_ d: DeviceRecord) -> JSONValue {
        .object([
            "id": .string(d.id),
            "token": .string(d.token),
            "provider": .string(d.provider.rawValue),
            "platform": .string(d.platform.rawValue),
            "device_id": d.deviceID.map(JSONValue.string) ?? .null,
            "app_version": d.appVersion.map(JSONValue.string) ?? .null,
            "os_version": d.osVersion.map(JSONValue.string) ?? .null,
            "locale": d.locale.map(JSONValue.string) ?? .null,
            "user_agent": d.userAgent.map(JSONValue.string) ?? .null,
            "active": .bool(d.isActive),
            "created_at": .string(Timestamp.string(epochMilliseconds: d.createdAt)),
            "last_used_at": .string(Timestamp.string(epochMilliseconds: d.lastUsedAt)),
            "deactivated_at": d.deactivatedAt.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null,
            "deactivation_reason": d.deactivationReason.map(JSONValue.string) ?? .null,
            "app_id": .string(d.appID),
            "environment": d.apnsEnvironment.map { .string($0.rawValue) } ?? .null,
        ])
    }
}
