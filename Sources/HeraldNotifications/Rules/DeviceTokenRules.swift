import Foundation
import HeraldPush

/// Shape checks for push tokens before they are stored.
///
/// Why check shape at all when the push service has the final word: a malformed token would only
/// fail later, inside a background delivery, where nobody can tell the client what it sent wrong.
/// These rules are deliberately loose enough to survive providers lengthening their tokens.
public enum DeviceTokenRules {
    /// Apple's tokens are 32 bytes (64 hex characters) today, but Apple has said clients must
    /// not assume a fixed length, so longer tokens are accepted up to a generous bound.
    static let apnsHexLength = 64...200
    static let fcmLength = 32...4096
    static let endpointMaxLength = 2048

    /// Empty when `token` is acceptable for `provider`; otherwise one human message per problem.
    /// For Web Push the token is the subscription endpoint URL.
    public static func problems(token: String, provider: PushProvider) -> [String] {
        switch provider {
        case .apns: apnsProblems(token)
        case .fcm: fcmProblems(token)
        case .webpush: endpointProblems(token)
        }
    }

    /// The form to store and compare tokens in, for a token that has no `problems`.
    ///
    /// Why only APNs changes: hex is case-insensitive, so "ABCD…" and "abcd…" are the same device
    /// and must not register twice. FCM tokens and endpoint URLs are case-sensitive.
    public static func normalized(token: String, provider: PushProvider) -> String {
        switch provider {
        case .apns: token.lowercased()
        case .fcm, .webpush: token
        }
    }

    /// Empty when a `provider` token can belong to a device on `platform`.
    ///
    /// Why FCM on every platform: Firebase delivers to iOS (via APNs) and to browsers as well as
    /// to Android, while APNs and Web Push each reach only one kind of device.
    public static func platformProblems(provider: PushProvider, platform: DevicePlatform) -> [String] {
        let allowed = platforms(for: provider)
        guard !allowed.contains(platform) else { return [] }
        let names = DevicePlatform.allCases.filter(allowed.contains).map(\.rawValue).joined(separator: ", ")
        return ["\(provider.rawValue) tokens are only valid for platform \(names), not \(platform.rawValue)"]
    }

    static func platforms(for provider: PushProvider) -> Set<DevicePlatform> {
        switch provider {
        case .apns: [.ios]
        case .fcm: [.ios, .android, .web]
        case .webpush: [.web]
        }
    }

    private static func apnsProblems(_ token: String) -> [String] {
        var problems: [String] = []
        let bytes = Array(token.utf8)
        if !bytes.allSatisfy(isHexDigit) || !apnsHexLength.contains(bytes.count) {
            problems.append("must be \(apnsHexLength.lowerBound) to \(apnsHexLength.upperBound) hexadecimal characters")
        }
        if bytes.count % 2 != 0 {
            problems.append("must have an even number of hexadecimal characters (whole bytes)")
        }
        return problems
    }

    /// FCM tokens are base64url text plus ':' (e.g. "dXk3…:APA91b…"); anything else, including
    /// whitespace picked up by copy and paste, means the client sent something that is not a token.
    private static func fcmProblems(_ token: String) -> [String] {
        var problems: [String] = []
        let bytes = Array(token.utf8)
        if !fcmLength.contains(bytes.count) {
            problems.append("must be \(fcmLength.lowerBound) to \(fcmLength.upperBound) characters long")
        }
        if !bytes.allSatisfy({ isBase64URLDigit($0) || $0 == UInt8(ascii: ":") }) {
            problems.append("must contain only letters, digits, '-', '_' and ':'")
        }
        return problems
    }

    /// Push services are only reachable over TLS, and an endpoint is a capability URL that must
    /// not travel in clear text. Plain http is allowed for loopback hosts only (localhost,
    /// 127.0.0.1, [::1]), so tests can run against a local mock push service.
    static func endpointProblems(_ endpoint: String) -> [String] {
        if endpoint.utf8.count > endpointMaxLength {
            return ["must be at most \(endpointMaxLength) characters"]
        }
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme?.lowercased() else {
            return ["must be an absolute https URL"]
        }
        guard let host = url.host?.lowercased(), !host.isEmpty else {
            return ["must be an absolute https URL with a host"]
        }
        switch scheme {
        case "https": return []
        case "http" where loopbackHosts.contains(host): return []
        default: return ["must be an https URL (http is allowed only for localhost, 127.0.0.1 and [::1])"]
        }
    }

    private static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "[::1]", "::1"]

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    static func isBase64URLDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// Decodes base64url, with or without '=' padding. Standard base64's '+' and '/' are refused:
    /// browsers' `PushSubscription.toJSON()` always produces base64url, so those characters mean
    /// the client re-encoded the key and may have done so wrongly.
    static func base64URLDecoded(_ text: String) -> Data? {
        var body = Substring(text)
        let padding = body.reversed().prefix(while: { $0 == "=" }).count
        if padding > 0 {
            guard padding <= 2, text.utf8.count % 4 == 0 else { return nil }
            body = body.dropLast(padding)
        }
        guard body.utf8.allSatisfy(isBase64URLDigit), body.utf8.count % 4 != 1 else { return nil }
        var standard = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    static func base64URLEncoded(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A problem with one field of a request, named by its path in the request body.
public struct FieldProblem: Sendable, Hashable {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// A browser's Web Push subscription: where to send (`endpoint`) and the keys to encrypt with
/// (RFC 8291).
///
/// Coded in the shape of the browser's `PushSubscription.toJSON()`
/// (`{"endpoint": …, "keys": {"p256dh": …, "auth": …}}`) so a client can send it unchanged.
/// Decoding does not validate, so rows stored under older rules still load; new input goes
/// through `validate(endpoint:p256dh:auth:)`.
public struct WebPushSubscription: Sendable, Hashable, Codable {
    public var endpoint: String
    /// The user agent's P-256 public key, base64url.
    public var p256dh: String
    /// The 16-byte authentication secret, base64url.
    public var auth: String

    public init(endpoint: String, p256dh: String, auth: String) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// The subscription when every field is acceptable, with keys re-encoded as unpadded
    /// base64url so the same key always compares equal; otherwise `nil` and every problem found.
    ///
    /// The p256dh check is structural only (65 bytes, 0x04 prefix: an uncompressed P-256 point).
    /// Whether the point lies on the curve would need swift-crypto's
    /// `P256.KeyAgreement.PublicKey(x963Representation:)`, and this target does not depend on
    /// Crypto; an off-curve key fails at the first encryption instead.
    public static func validate(endpoint: String, p256dh: String, auth: String) -> (WebPushSubscription?, [FieldProblem]) {
        var problems = DeviceTokenRules.endpointProblems(endpoint).map {
            FieldProblem(field: "subscription.endpoint", message: $0)
        }

        let keyField = "subscription.keys.p256dh"
        let key = DeviceTokenRules.base64URLDecoded(p256dh)
        if let key {
            if key.count != 65 {
                problems.append(FieldProblem(field: keyField, message: "must decode to 65 bytes (an uncompressed P-256 public key), got \(key.count)"))
            } else if key.first != 0x04 {
                problems.append(FieldProblem(field: keyField, message: "must be an uncompressed P-256 point (first byte 0x04)"))
            }
        } else {
            problems.append(FieldProblem(field: keyField, message: "must be base64url"))
        }

        let authField = "subscription.keys.auth"
        let secret = DeviceTokenRules.base64URLDecoded(auth)
        if let secret {
            if secret.count != 16 {
                problems.append(FieldProblem(field: authField, message: "must decode to exactly 16 bytes, got \(secret.count)"))
            }
        } else {
            problems.append(FieldProblem(field: authField, message: "must be base64url"))
        }

        guard problems.isEmpty, let key, let secret else { return (nil, problems) }
        let subscription = WebPushSubscription(
            endpoint: endpoint,
            p256dh: DeviceTokenRules.base64URLEncoded(key),
            auth: DeviceTokenRules.base64URLEncoded(secret))
        return (subscription, [])
    }

    private enum CodingKeys: String, CodingKey {
        case endpoint, keys
    }

    private enum KeyCodingKeys: String, CodingKey {
        case p256dh, auth
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let keys = try container.nestedContainer(keyedBy: KeyCodingKeys.self, forKey: .keys)
        endpoint = try container.decode(String.self, forKey: .endpoint)
        p256dh = try keys.decode(String.self, forKey: .p256dh)
        auth = try keys.decode(String.self, forKey: .auth)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(endpoint, forKey: .endpoint)
        var keys = container.nestedContainer(keyedBy: KeyCodingKeys.self, forKey: .keys)
        try keys.encode(p256dh, forKey: .p256dh)
        try keys.encode(auth, forKey: .auth)
    }
}
