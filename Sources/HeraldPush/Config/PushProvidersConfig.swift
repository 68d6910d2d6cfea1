import HeraldCore

/// APNs over HTTP/2 with token (.p8) authentication.
public struct APNsConfig: Codable, Sendable, Equatable {
    /// The 10-character Team ID (the provider token's `iss`).
    public var teamID: String
    /// The 10-character Key ID of the .p8 key (the provider token's `kid`).
    public var keyID: String
    /// Path of the `AuthKey_<KEYID>.p8` file (PKCS#8 PEM of a P-256 key).
    public var privateKeyFile: String
    /// The app's bundle id (`apns-topic`; `.voip` etc. are appended per push type).
    public var topic: String
    /// `production` (api.push.apple.com) or `sandbox` (api.sandbox.push.apple.com).
    public var environment: String
    /// Overrides the host (tests point it at a mock): `https://127.0.0.1:8443`.
    public var baseURL: String?
    /// HTTP/2 connections kept open to APNs (each multiplexes many streams).
    public var connections: Int
    /// PEM file of extra CA certificates to trust (a mock's self-signed certificate).
    public var caFile: String?

    enum CodingKeys: String, CodingKey {
        case topic, environment, connections
        case teamID = "team_id"
        case keyID = "key_id"
        case privateKeyFile = "private_key_file"
        case baseURL = "base_url"
        case caFile = "ca_file"
    }

    public init(
        teamID: String, keyID: String, privateKeyFile: String, topic: String, environment: String = "production",
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

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            teamID: try c.decode(String.self, forKey: .teamID), keyID: try c.decode(String.self, forKey: .keyID),
            privateKeyFile: try c.decode(String.self, forKey: .privateKeyFile), topic: try c.decode(String.self, forKey: .topic))
        try c.override(&environment, .environment)
        try c.override(&baseURL, .baseURL)
        try c.override(&connections, .connections)
        try c.override(&caFile, .caFile)
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

    enum CodingKeys: String, CodingKey {
        case serviceAccountFile = "service_account_file"
        case projectID = "project_id"
        case baseURL = "base_url"
        case tokenURL = "token_url"
        case caFile = "ca_file"
    }

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

    enum CodingKeys: String, CodingKey {
        case subject
        case vapidPrivateKey = "vapid_private_key"
        case vapidPrivateKeyFile = "vapid_private_key_file"
        case caFile = "ca_file"
    }

    public init(vapidPrivateKey: String? = nil, vapidPrivateKeyFile: String? = nil, subject: String, caFile: String? = nil) {
        self.vapidPrivateKey = vapidPrivateKey
        self.vapidPrivateKeyFile = vapidPrivateKeyFile
        self.subject = subject
        self.caFile = caFile
    }
}
