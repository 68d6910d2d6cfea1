import Crypto
import Foundation
import HeraldCore
import Synchronization

/// The application server's VAPID identity (RFC 8292): a P-256 key whose public half browsers
/// were given as `applicationServerKey`, so a push service accepts only our pushes for their
/// subscriptions.
///
/// Why tokens are cached: a signature per message would cost an ECDSA operation per push, and
/// push services treat a token as valid until its `exp` anyway. Copies of a key share one cache.
public struct VAPIDKey: Sendable {
    let privateKey: P256.Signing.PrivateKey
    private let cache = VAPIDTokenCache()
    /// The uncompressed point, base64url without padding: the browser's `applicationServerKey`
    /// and the `k` parameter of the Authorization header. Computed once: every push's header
    /// carries it.
    public let publicKeyBase64URL: String

    /// Tokens live 12 hours unless asked otherwise: well under the 24 h ceiling of RFC 8292 §2,
    /// so a push service's clock running ahead does not reject them.
    public static let defaultTokenLifetime: Duration = .seconds(12 * 3600)
    /// A cached token is replaced this long before it expires (or halfway through a shorter life),
    /// so a request in flight never carries a token that expires on arrival.
    static let refreshMargin = 3600

    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        publicKeyBase64URL = WebPushBase64URL.encode(privateKey.publicKey.x963Representation)
    }

    /// From `vapid_private_key`: the base64url of the 32-byte private scalar (what
    /// `herald vapid-keys` and the `web-push` tools print). A pasted PEM is accepted too.
    public init(base64URL text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN") {
            try self.init(pem: trimmed)
            return
        }
        guard let raw = WebPushBase64URL.decode(trimmed) else {
            throw WebPushError.invalidVAPIDKey("not base64url text")
        }
        guard raw.count == 32 else {
            throw WebPushError.invalidVAPIDKey("expected the base64url of a 32-byte P-256 scalar (43 characters), got \(raw.count) bytes")
        }
        do {
            self.init(privateKey: try P256.Signing.PrivateKey(rawRepresentation: raw))
        } catch {
            throw WebPushError.invalidVAPIDKey("the 32 bytes are not a valid P-256 private scalar")
        }
    }

    /// From a PEM file's text: SEC1 (`EC PRIVATE KEY`) or PKCS#8 (`PRIVATE KEY`), as openssl writes them.
    public init(pem: String) throws {
        do {
            self.init(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
        } catch {
            throw WebPushError.invalidVAPIDKey("not a PEM P-256 private key (EC PRIVATE KEY or PRIVATE KEY): \(error)")
        }
    }

    /// The key `push.webpush` configures: exactly one of the inline key and the key file.
    public init(config: WebPushConfig) throws {
        switch (config.vapidPrivateKey, config.vapidPrivateKeyFile) {
        case (let key?, nil):
            try self.init(base64URL: key)
        case (nil, let path?):
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw WebPushError.invalidVAPIDKey("cannot read vapid_private_key_file \(path.debugDescription): \(error.localizedDescription)")
            }
            try self.init(pem: text)
        case (.some, .some):
            throw WebPushError.invalidVAPIDKey("set vapid_private_key or vapid_private_key_file, not both")
        case (nil, nil):
            throw WebPushError.invalidVAPIDKey("set vapid_private_key or vapid_private_key_file")
        }
    }

    public static func generate() -> VAPIDKey {
        VAPIDKey(privateKey: P256.Signing.PrivateKey())
    }

    /// The private scalar in the form `vapid_private_key` takes.
    public var privateKeyBase64URL: String {
        WebPushBase64URL.encode(privateKey.rawRepresentation)
    }

    /// The `Authorization` header value for a push to `endpoint`: `vapid t=<JWT>, k=<public key>`.
    ///
    /// - Parameters:
    ///   - subject: the `sub` claim, a `mailto:` or `https:` URI push services can use to reach us.
    ///   - ttl: the token's lifetime, at most 24 hours.
    public func authorization(endpoint: String, subject: String, now: Date, ttl: Duration = defaultTokenLifetime) throws -> String {
        let token = try token(audience: Self.audience(of: endpoint), subject: subject, now: now, ttl: ttl)
        return "vapid t=\(token), k=\(publicKeyBase64URL)"
    }

    public func authorization(endpoint: URL, subject: String, now: Date, ttl: Duration = defaultTokenLifetime) throws -> String {
        try authorization(endpoint: endpoint.absoluteString, subject: subject, now: now, ttl: ttl)
    }

    /// The ES256 JWT for `audience`, reused from the cache while it has more than the refresh
    /// margin left.
    public func token(audience: String, subject: String, now: Date, ttl: Duration = defaultTokenLifetime) throws -> String {
        let lifetime = Int(ttl.components.seconds)
        guard lifetime > 0, lifetime <= 86_400 else { throw WebPushError.invalidTokenLifetime(seconds: lifetime) }
        let key = VAPIDTokenCache.Key(audience: audience, subject: subject)
        if let cached = cache.token(for: key, now: now) { return cached }

        let issuedAt = Int(now.timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt + lifetime
        let header = #"{"typ":"JWT","alg":"ES256"}"#
        var claims = JSONWriter(capacity: 128)
        claims.ascii("{\"aud\":")
        claims.write(string: audience)
        claims.ascii(",\"exp\":")
        claims.write(integer: Int64(expiresAt))
        claims.ascii(",\"sub\":")
        claims.write(string: subject)
        claims.ascii("}")
        let signingInput = WebPushBase64URL.encode(Data(header.utf8)) + "." + WebPushBase64URL.encode(Data(claims.bytes))
        // JWS ES256 wants the raw r||s form (RFC 7518 §3.4), not DER.
        let signature = try privateKey.signature(for: Data(signingInput.utf8)).rawRepresentation
        let token = signingInput + "." + WebPushBase64URL.encode(signature)

        let margin = min(Self.refreshMargin, lifetime / 2)
        cache.store(
            token, for: key, issuedAt: Date(timeIntervalSince1970: TimeInterval(issuedAt)),
            refreshAt: Date(timeIntervalSince1970: TimeInterval(expiresAt - margin)))
        return token
    }

    /// The `aud` claim: the endpoint's origin (RFC 6454 serialization: lowercased scheme and
    /// host, the port only when it is not the scheme's default), because push services compare
    /// it with their own origin.
    public static func audience(of endpoint: String) throws -> String {
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", var host = components.host?.lowercased(), !host.isEmpty
        else { throw WebPushError.invalidEndpoint(endpoint) }
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = scheme == "https" ? 443 : 80
        if let port = components.port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    /// RFC 8292 §2.1: the contact must be a `mailto:` or `https:` URI (Apple's service rejects
    /// anything else), checked once at startup rather than discovered as rejected pushes.
    public static func validateSubject(_ subject: String) throws {
        let lower = subject.lowercased()
        let ok =
            (lower.hasPrefix("mailto:") && subject.count > "mailto:".count)
            || (lower.hasPrefix("https://") && URLComponents(string: subject)?.host?.isEmpty == false)
        guard ok, !subject.contains(where: \.isWhitespace) else { throw WebPushError.invalidSubject(subject) }
    }
}

/// Signed tokens by audience and subject. A Mutex, not an actor: `authorization` is called
/// synchronously while building a request and the critical sections are dictionary lookups.
final class VAPIDTokenCache: Sendable {
    struct Key: Hashable {
        var audience: String
        var subject: String
    }

    struct Entry {
        var token: String
        var issuedAt: Date
        var refreshAt: Date
    }

    /// Push services are few (one origin each, WNS a few dozen hosts); the bound only guards
    /// against a flood of odd endpoints.
    static let capacity = 1024
    private let entries = Mutex<[Key: Entry]>([:])

    func token(for key: Key, now: Date) -> String? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            // A clock that moved backwards would leave exp more than the lifetime ahead: re-sign.
            guard now >= entry.issuedAt, now < entry.refreshAt else { return nil }
            return entry.token
        }
    }

    func store(_ token: String, for key: Key, issuedAt: Date, refreshAt: Date) {
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { $0.value.refreshAt > issuedAt }
                if entries.count >= Self.capacity { entries.removeAll() }
            }
            entries[key] = Entry(token: token, issuedAt: issuedAt, refreshAt: refreshAt)
        }
    }
}
