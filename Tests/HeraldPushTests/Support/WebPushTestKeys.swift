import Crypto
import Foundation
import HeraldMockProviders

/// base64url written independently of Herald's, so a bug there cannot agree with itself here.
enum WebPushTestBase64 {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) throws -> Data {
        var standard = text.filter { !$0.isWhitespace }.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { throw WebPushTestError("not base64url: \(text)") }
        return data
    }
}

struct WebPushTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A browser's side of a subscription: the key pair and auth secret it would make, and the
/// strings it would hand to the server.
struct WebPushTestSubscription: Sendable {
    let privateKey: P256.KeyAgreement.PrivateKey
    let authSecret: Data

    init(privateKey: P256.KeyAgreement.PrivateKey = .init(), authSecret: Data = Data((0..<16).map { _ in UInt8.random(in: 0...255) })) {
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    var publicKey: Data { privateKey.publicKey.x963Representation }
    var p256dh: String { WebPushTestBase64.encode(publicKey) }
    var auth: String { WebPushTestBase64.encode(authSecret) }
}

/// The user agent's half of RFC 8291: what a browser does with a push body. Written from the
/// RFC's text (§3.3, §3.4, RFC 8188 §2), not from Herald's encryptor, so the two check each other.
enum WebPushTestDecryptor {
    struct Header {
        var salt: Data
        var recordSize: UInt32
        var keyID: Data
        var ciphertext: Data
    }

    static func parse(_ body: Data) throws -> Header {
        let bytes = [UInt8](body)
        guard bytes.count >= 21 else { throw WebPushTestError("body shorter than a header") }
        let salt = Data(bytes[0..<16])
        let rs = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idlen = Int(bytes[20])
        guard bytes.count >= 21 + idlen else { throw WebPushTestError("keyid runs past the body") }
        return Header(salt: salt, recordSize: rs, keyID: Data(bytes[21..<(21 + idlen)]), ciphertext: Data(bytes[(21 + idlen)...]))
    }

    static func decrypt(_ body: Data, subscription: WebPushTestSubscription) throws -> Data {
        let header = try parse(body)
        guard header.keyID.count == 65 else { throw WebPushTestError("keyid is not a 65-byte point") }
        guard header.ciphertext.count <= Int(header.recordSize) else { throw WebPushTestError("more than one record") }
        let serverPublic = try P256.KeyAgreement.PublicKey(x963Representation: header.keyID)
        let ecdh = try subscription.privateKey.sharedSecretFromKeyAgreement(with: serverPublic)
        let ecdhBytes = ecdh.withUnsafeBytes { Data($0) }

        // HKDF-Extract / Expand spelled out with HMAC, one block each (all outputs ≤ 32 bytes).
        func extract(salt: Data, ikm: Data) -> Data {
            Data(HMAC<SHA256>.authenticationCode(for: ikm, using: SymmetricKey(data: salt)))
        }
        func expand(prk: Data, info: Data, length: Int) -> Data {
            Data(HMAC<SHA256>.authenticationCode(for: info + Data([1]), using: SymmetricKey(data: prk)).prefix(length))
        }
        let keyInfo = Data("WebPush: info".utf8) + Data([0]) + subscription.publicKey + header.keyID
        let ikm = expand(prk: extract(salt: subscription.authSecret, ikm: ecdhBytes), info: keyInfo, length: 32)
        let prk = extract(salt: header.salt, ikm: ikm)
        let cek = expand(prk: prk, info: Data("Content-Encoding: aes128gcm".utf8) + Data([0]), length: 16)
        let nonce = expand(prk: prk, info: Data("Content-Encoding: nonce".utf8) + Data([0]), length: 12)

        guard header.ciphertext.count >= 17 else { throw WebPushTestError("record shorter than a tag") }
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: nonce), ciphertext: header.ciphertext.dropLast(16), tag: header.ciphertext.suffix(16))
        let record = try AES.GCM.open(box, using: SymmetricKey(data: cek))
        // Strip zero padding, then the delimiter, which must be 2 for the last record.
        guard let last = record.lastIndex(where: { $0 != 0 }), record[last] == 0x02 else {
            throw WebPushTestError("the record does not end with the 0x02 delimiter")
        }
        return Data(record[record.startIndex..<last])
    }
}

/// Runs a Python snippet with the interpreter scripts/test provides (PyJWT, cryptography,
/// http_ece), feeding it JSON on stdin and reading JSON from stdout.
///
/// Why it fails rather than skips without the interpreter: these checks are the only proof
/// that browsers' reference implementations agree with Herald, and a silent skip would let the
/// suite pass on a machine where nothing was checked.
enum WebPushTestPython {
    /// Distinct from `WebPushTestError` so a test expecting Python to refuse something cannot
    /// pass because there was no Python.
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "HERALD_TEST_PYTHON is not set: run the suite with scripts/test, which creates .venv-test with PyJWT, "
                + "cryptography and http_ece and exports it (or set HERALD_TEST_PYTHON=<repo>/.venv-test/bin/python)"
        }
    }

    @discardableResult
    static func requireInterpreter() throws -> String {
        guard let python = ProcessInfo.processInfo.environment["HERALD_TEST_PYTHON"], !python.isEmpty else { throw NotConfigured() }
        return python
    }

    static func run(_ script: String, input: [String: String]) async throws -> [String: Any] {
        let python = try requireInterpreter()
        let finished = try await ChildProcess.run(python, ["-c", script], input: try JSONSerialization.data(withJSONObject: input))
        let output = finished.output
        guard finished.status == 0 else {
            throw WebPushTestError("python (\(python)) disagreed, exit \(finished.status):\n\(finished.errorText)")
        }
        guard let object = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw WebPushTestError("python printed no JSON object: \(String(decoding: output, as: UTF8.self))")
        }
        return object
    }
}
