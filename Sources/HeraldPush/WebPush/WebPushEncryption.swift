import Crypto
import Foundation

/// Why a Web Push message could not be built. Every case names the input at fault, because
/// these reach delivery reasons and startup errors where nobody has a debugger.
public enum WebPushError: Error, Equatable, CustomStringConvertible {
    case invalidUserAgentKey(String)
    case invalidAuthSecret(byteCount: Int)
    case invalidSalt(byteCount: Int)
    case invalidRecordSize(UInt32)
    case payloadTooLarge(plaintextBytes: Int, limit: Int)
    case invalidVAPIDKey(String)
    case invalidEndpoint(String)
    case invalidSubject(String)
    case invalidTokenLifetime(seconds: Int)

    public var description: String {
        switch self {
        case .invalidUserAgentKey(let why): "the subscription's p256dh key is unusable: \(why)"
        case .invalidAuthSecret(let count): "the subscription's auth secret must be 16 bytes, got \(count)"
        case .invalidSalt(let count): "the salt must be 16 bytes, got \(count)"
        case .invalidRecordSize(let size): "the record size must be at least 18 bytes (delimiter + tag + 1), got \(size)"
        case .payloadTooLarge(let bytes, let limit):
            "the push payload is \(bytes) bytes; one Web Push message carries at most \(limit) bytes of plaintext"
        case .invalidVAPIDKey(let why): "the VAPID private key is unusable: \(why)"
        case .invalidEndpoint(let endpoint): "the push endpoint \(endpoint.debugDescription) is not an http(s) URL with a host"
        case .invalidSubject(let subject): "the VAPID subject \(subject.debugDescription) must be a mailto: or https: URI (RFC 8292 §2.1)"
        case .invalidTokenLifetime(let seconds): "a VAPID token must live more than 0 s and at most 24 h (RFC 8292 §2), got \(seconds) s"
        }
    }
}

/// The `aes128gcm` content coding (RFC 8188) as Web Push profiles it (RFC 8291).
///
/// Why a single record and no padding: RFC 8291 §4 requires one record, and push services
/// need not accept more than 4096 bytes of body, so the whole message is one AES-GCM seal.
/// Why a fresh server key and salt per message: both feed the key schedule, so reusing them
/// would reuse the content key and nonce across messages.
public enum WebPushEncryption {
    /// The body size every push service must accept (RFC 8030 §7.2).
    public static let maxBodySize = 4096
    /// salt (16) + rs (4) + idlen (1) + keyid (65): RFC 8291 §4.
    public static let headerSize = 86
    static let tagSize = 16
    /// The largest plaintext that still fits `maxBodySize`: 4096 − 86 − 1 (delimiter) − 16 (tag).
    public static let maxPlaintextSize = maxBodySize - headerSize - 1 - tagSize

    /// The full request body: header, then the sealed record.
    ///
    /// - Parameters:
    ///   - userAgentPublicKey: the subscription's `p256dh`, an uncompressed P-256 point (65 bytes).
    ///   - authSecret: the subscription's `auth` (16 bytes).
    ///   - serverKey, salt: fixed only by tests that reproduce the RFC's example.
    public static func encrypt(
        plaintext: Data, userAgentPublicKey: Data, authSecret: Data, serverKey: P256.KeyAgreement.PrivateKey = ephemeralKey(),
        salt: Data = randomSalt(), recordSize: UInt32 = 4096
    ) throws -> Data {
        guard salt.count == 16 else { throw WebPushError.invalidSalt(byteCount: salt.count) }
        guard recordSize >= UInt32(tagSize + 2) else { throw WebPushError.invalidRecordSize(recordSize) }
        let limit = min(maxPlaintextSize, Int(recordSize) - tagSize - 1)
        guard plaintext.count <= limit else { throw WebPushError.payloadTooLarge(plaintextBytes: plaintext.count, limit: limit) }
        let serverPublicKey = serverKey.publicKey.x963Representation
        let keys = try deriveKeys(
            userAgentPublicKey: userAgentPublicKey, authSecret: authSecret, serverKey: serverKey, serverPublicKey: serverPublicKey,
            salt: salt)

        var record = plaintext
        record.append(0x02)  // last-record delimiter, no padding
        let sealed = try AES.GCM.seal(record, using: keys.contentKey, nonce: keys.nonce)

        var body = Data(capacity: headerSize + record.count + tagSize)
        body.append(salt)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(serverPublicKey.count))
        body.append(serverPublicKey)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// A one-message ECDH key from 32 random bytes, drawn again in the rare case they are not a
    /// valid P-256 scalar (zero, or not below the group order: about 2^-32 of draws).
    ///
    /// Why not `P256.KeyAgreement.PrivateKey()`: swift-crypto's generator runs a FIPS
    /// pairwise-consistency test (an ECDSA sign and verify) and keeps drawing until the key is
    /// compact-representable; together about 60 µs, half of a message's encryption. A key that
    /// is used once for ECDH and thrown away needs neither (see BENCHMARKS.md, push delivery).
    public static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            let scalar = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
    }

    /// 16 bytes from the system's cryptographic generator.
    public static func randomSalt() -> Data {
        SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
    }

    /// The content key and nonce of RFC 8291 §3.4. The auth secret salts the first HKDF so a
    /// party that knows only the subscription's public key cannot derive them.
    ///
    /// Why the HKDFs are written out as their five HMACs (RFC 5869, one output block each):
    /// swift-crypto's `HKDF` extracts from the same salt and IKM once for the key and again for
    /// the nonce, and wraps every step in new keys and buffers; 11.8 µs of a message's 61 µs
    /// went there (BENCHMARKS.md, P4). The HMACs are still swift-crypto's, and the RFC's
    /// example (`WebPushEncryptionTests`) pins the result.
    static func deriveKeys(
        userAgentPublicKey: Data, authSecret: Data, serverKey: P256.KeyAgreement.PrivateKey, serverPublicKey: Data? = nil, salt: Data
    ) throws -> (contentKey: SymmetricKey, nonce: AES.GCM.Nonce) {
        guard authSecret.count == 16 else { throw WebPushError.invalidAuthSecret(byteCount: authSecret.count) }
        let userAgentKey = try userAgentKey(userAgentPublicKey)
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: userAgentKey)
        // IKM = HKDF(salt: auth, ikm: ECDH, info: "WebPush: info" 0 ua as, 32 bytes).
        let keyPRK = shared.withUnsafeBytes { HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: authSecret)) }
        var expand = HMAC<SHA256>(key: SymmetricKey(data: keyPRK))
        expand.update(data: keyInfoLabel)
        expand.update(data: userAgentPublicKey)
        expand.update(data: serverPublicKey ?? serverKey.publicKey.x963Representation)
        expand.update(data: blockOne)
        let ikm = expand.finalize()
        // PRK = HKDF-Extract(salt, IKM), shared by the key and the nonce.
        let prk = SymmetricKey(data: ikm.withUnsafeBytes { HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: salt)) })
        let key = HMAC<SHA256>.authenticationCode(for: contentKeyInfo, using: prk)
        let nonce = HMAC<SHA256>.authenticationCode(for: nonceInfo, using: prk)
        return (
            key.withUnsafeBytes { SymmetricKey(data: UnsafeRawBufferPointer(rebasing: $0[0..<16])) },
            try nonce.withUnsafeBytes { try AES.GCM.Nonce(data: UnsafeRawBufferPointer(rebasing: $0[0..<12])) }
        )
    }

    static let keyInfoLabel = Data("WebPush: info\0".utf8)
    /// HKDF-Expand's counter for its first (and here only) block.
    static let blockOne = Data([1])
    static let contentKeyInfo = Data("Content-Encoding: aes128gcm\0\u{1}".utf8)
    static let nonceInfo = Data("Content-Encoding: nonce\0\u{1}".utf8)

    /// Only the uncompressed form is accepted: the key is also hashed into the key schedule
    /// byte for byte, so a compressed point would decrypt to garbage on the browser.
    static func userAgentKey(_ bytes: Data) throws -> P256.KeyAgreement.PublicKey {
        guard bytes.count == 65 else { throw WebPushError.invalidUserAgentKey("expected 65 bytes, got \(bytes.count)") }
        guard bytes.first == 0x04 else { throw WebPushError.invalidUserAgentKey("not an uncompressed point (first byte is not 0x04)") }
        do {
            return try P256.KeyAgreement.PublicKey(x963Representation: bytes)
        } catch {
            throw WebPushError.invalidUserAgentKey("not a point on P-256")
        }
    }
}

/// base64url without padding (RFC 4648 §5), the encoding of every Web Push key and token.
/// Named for this module's Web Push code so it cannot collide with other senders' helpers.
enum WebPushBase64URL {
    static func encode(_ data: Data) -> String {
        // Standard base64 then an in-place byte map: three `replacingOccurrences` passes cost
        // more than the encoding itself.
        var bytes = Array(data.base64EncodedData())
        var length = bytes.count
        while length > 0, bytes[length - 1] == UInt8(ascii: "=") { length -= 1 }
        for index in 0..<length {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes[0..<length], as: UTF8.self)
    }

    /// Accepts optional '=' padding (some clients keep it) but not standard base64's '+' '/'.
    static func decode(_ text: String) -> Data? {
        let padding = text.reversed().prefix(while: { $0 == "=" }).count
        let body = text.dropLast(padding)
        guard padding <= 2, body.utf8.allSatisfy(isDigit), body.utf8.count % 4 != 1 else { return nil }
        var standard = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
