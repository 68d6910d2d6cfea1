import HeraldCore
import HeraldPush

/// The push delivery worker.
public struct PushConfig: ConfigSection, Sendable, Equatable {
    /// Run the delivery worker on this node (turn off on nodes that only serve clients).
    public var workerEnabled = true
    /// Pushes in flight at once per node.
    public var concurrency = 32
    /// Deliveries claimed per database round trip.
    public var batchSize = 100
    /// How often an idle worker looks for due deliveries written by other nodes.
    public var pollIntervalMs = 500
    /// A claimed delivery whose worker died is retried after this lease.
    public var leaseSeconds = 60
    /// Pushes a node sends from memory right after writing them (see `PushHandoff`); beyond
    /// this many waiting, new pushes are written for the database path instead. 0: always
    /// through the database.
    public var handoffCapacity = 25_000
    /// Deadline of one provider request.
    public var requestTimeoutMs = 10_000
    /// Attempts before a delivery is dead-lettered…
    public var maxAttempts = 8
    /// …or this age, whichever comes first.
    public var maxAgeSeconds = 86_400
    /// Exponential backoff: first retry after this, doubling up to `retry_max_ms`, with jitter.
    public var retryBaseMs = 1_000
    public var retryMaxMs = 600_000
    /// The log sender (used for providers that are not configured) appends one JSON line per
    /// push here.
    public var logFile: String?
    /// Providers of the default app (`default`); one left out is served by the log sender.
    public var apns: APNsConfig?
    public var fcm: FCMConfig?
    public var webpush: WebPushConfig?
    /// More apps in this deployment (a driver app beside the customer's): each with its own
    /// providers. A device registers with its app's id (`app_id`); without one it belongs to
    /// `default`, the providers above.
    public var apps: [PushAppConfig] = []

    public init() {}

    /// Every app by id: `default` (the providers above) and each of `apps`.
    public var resolvedApps: [String: PushAppConfig] {
        var result: [String: PushAppConfig] = [:]
        for app in apps { result[app.id] = app }
        if result[PushApps.defaultID] == nil {
            result[PushApps.defaultID] = PushAppConfig(id: PushApps.defaultID, apns: apns, fcm: fcm, webpush: webpush)
        }
        return result
    }

    /// Each app's configured APNs environment (where its tokens go unless registered with another).
    public var apnsEnvironments: [String: APNsEnvironment] {
        resolvedApps.compactMapValues { $0.apns?.environment }
    }

    /// This section's problems, named by their path in the config file.
    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("push")
        checks.check((1...10_000).contains(concurrency), "concurrency", "must be between 1 and 10000")
        checks.check((1...10_000).contains(batchSize), "batch_size", "must be between 1 and 10000")
        checks.check((10...60_000).contains(pollIntervalMs), "poll_interval_ms", "must be between 10 and 60000")
        checks.check(leaseSeconds >= 1, "lease_seconds", "must be positive")
        checks.check((0...1_000_000).contains(handoffCapacity), "handoff_capacity", "must be between 0 and 1000000")
        checks.check((100...300_000).contains(requestTimeoutMs), "request_timeout_ms", "must be between 100 and 300000")
        checks.check(maxAttempts >= 1, "max_attempts", "must be positive")
        checks.check(maxAgeSeconds >= 1, "max_age_seconds", "must be positive")
        checks.check(retryBaseMs >= 1 && retryMaxMs >= retryBaseMs, "retry_base_ms", "must be positive and at most retry_max_ms")
        checks.check(leaseSeconds * 1000 > requestTimeoutMs, "lease_seconds", "must be longer than push.request_timeout_ms")
        checks.add(Self.providerErrors(apns: apns, fcm: fcm, webpush: webpush, prefix: "push."))
        var ids: Set<String> = []
        for (index, app) in apps.enumerated() {
            let path = "push.apps[\(index)]."
            checks.check(PushAppConfig.isValidID(app.id), "apps[\(index)].id", "must be 1-64 of a-z, 0-9, - and _")
            checks.check(ids.insert(app.id).inserted, "apps[\(index)].id", "is used twice")
            if app.id == PushApps.defaultID {
                checks.check(
                    apns == nil && fcm == nil && webpush == nil, "apps[\(index)].id", "default is the app of push.apns/fcm/webpush: name this app otherwise")
            }
            checks.add(Self.providerErrors(apns: app.apns, fcm: app.fcm, webpush: app.webpush, prefix: path))
        }
        return checks.errors
    }

    /// One app's provider settings' problems, their paths under `prefix` (`push.`, `push.apps[1].`).
    static func providerErrors(apns: APNsConfig?, fcm: FCMConfig?, webpush: WebPushConfig?, prefix: String) -> [FieldError] {
        var checks = ConfigChecks("")
        if let apns = apns {
            let isID = { (text: String) in text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
            checks.check(isID(apns.teamID), prefix + "apns.team_id", "must be the 10-character Team ID")
            checks.check(isID(apns.keyID), prefix + "apns.key_id", "must be the 10-character Key ID of the .p8 key")
            checks.check(!apns.privateKeyFile.isEmpty, prefix + "apns.private_key_file", "must name the .p8 file")
            checks.check(!apns.topic.isEmpty && !apns.topic.contains(" "), prefix + "apns.topic", "must be the app's bundle id")
            checks.check((1...64).contains(apns.connections), prefix + "apns.connections", "must be between 1 and 64")
            if let url = apns.baseURL { checks.check(url.hasPrefix("https://"), prefix + "apns.base_url", "must be an https URL") }
            if let url = apns.sandboxBaseURL { checks.check(url.hasPrefix("https://"), prefix + "apns.sandbox_base_url", "must be an https URL") }
        }
        if let fcm = fcm {
            checks.check(!fcm.serviceAccountFile.isEmpty, prefix + "fcm.service_account_file", "must name the service-account JSON file")
        }
        if let webpush = webpush {
            checks.check(
                (webpush.vapidPrivateKey == nil) != (webpush.vapidPrivateKeyFile == nil), prefix + "webpush.vapid_private_key",
                "give exactly one of vapid_private_key and vapid_private_key_file")
            checks.check(
                webpush.subject.hasPrefix("mailto:") || webpush.subject.hasPrefix("https://"), prefix + "webpush.subject",
                "must be a mailto: or https: URI")
        }
        return checks.errors
    }
}
