import HeraldCore

/// APNs over HTTP/2 with token (.p8) authentication.
///
/// The four credentials have no default: validation (`push.apns.*`) names each one missing.
public struct APNsConfig: ConfigSection, Sendable, Equatable {
    /// The 10-character Team ID (the provider token's `iss`).
    public var teamID = ""
    /// The 10-character Key ID of the .p8 key (the provider token's `kid`).
    public var keyID = ""
    /// Path of the `AuthKey_<KEYID>.p8` file (PKCS#8 PEM of a P-256 key).
    public var privateKeyFile = ""
    /// The app's bundle id (`apns-topic`; `.voip` etc. are appended per push type).
    public var topic = ""
    /// `production` (api.push.apple.com) or `sandbox` (api.sandbox.push.apple.com).
    public var environment = APNsEnvironment.production
    /// Overrides the host (tests point it at a mock): `https://127.0.0.1:8443`; for both
    /// environments unless `sandbox_base_url` is set too.
    public var baseURL: String?
    /// Overrides the sandbox host alone (where tokens registered as `sandbox` go).
    public var sandboxBaseURL: String?
    /// HTTP/2 connections kept open to APNs (each multiplexes many streams).
    public var connections = 2
    /// PEM file of extra CA certificates to trust (a mock's self-signed certificate).
    public var caFile: String?

    public init() {}

    public init(
        teamID: String, keyID: String, privateKeyFile: String, topic: String, environment: APNsEnvironment = .production,
        baseURL: String? = nil, connections: Int = 2, caFile: String? = nil
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyFile = privateKeyFile
        self.topic = topic
        self.environment = environment
        self.baseURL = baseURL
        self.connections = connections
        self.caFile = caFile
    }

}

/// FCM HTTP v1 with a service account.
public struct FCMConfig: Codable, Sendable, Equatable {
    /// The service-account JSON downloaded from the Firebase console.
    public var serviceAccountFile: String
    /// Defaults to the service account's `project_id`.
    public var projectID: String?
    /// Overrides `https://fcm.googleapis.com` (tests point it at a mock).
    public var baseURL: String?
    /// Overrides the service account's `token_uri`.
    public var tokenURL: String?
    /// PEM file of extra CA certificates to trust (a mock's self-signed certificate).
    public var caFile: String?

    public init(serviceAccountFile: String, projectID: String? = nil, baseURL: String? = nil, tokenURL: String? = nil, caFile: String? = nil) {
        self.serviceAccountFile = serviceAccountFile
        self.projectID = projectID
        self.baseURL = baseURL
        self.tokenURL = tokenURL
        self.caFile = caFile
    }
}

/// Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm (RFC 8291).
public struct WebPushConfig: Codable, Sendable, Equatable {
    /// The VAPID key pair: the private key as base64url of the 32-byte P-256 scalar (what
    /// `herald vapid-keys` prints), or a PEM file with `vapid_private_key_file`.
    public var vapidPrivateKey: String?
    public var vapidPrivateKeyFile: String?
    /// The VAPID `sub` claim: `mailto:ops@example.com` or an https URL.
    public var subject: String
    /// PEM file of extra CA certificates to trust (a mock's self-signed certificate).
    public var caFile: String?

    public init(vapidPrivateKey: String? = nil, vapidPrivateKeyFile: String? = nil, subject: String, caFile: String? = nil) {
        self.vapidPrivateKey = vapidPrivateKey
        self.vapidPrivateKeyFile = vapidPrivateKeyFile
        self.subject = subject
        self.caFile = caFile
    }
}

/// The apps of a deployment, as configuration names them.
public enum PushApps {
    /// The id of the app configured at the top of `push` (and of every device registered
    /// before apps existed, or without an `app_id`).
    public static let defaultID = "default"
}
