import Crypto
import Foundation
import Testing

@testable import HeraldPush

/// RFC 8291 `aes128gcm` encryption: the RFC's own example byte for byte, a browser-side
/// decryption written from the RFC, http_ece (the reference implementation), and the limits.
@Suite struct WebPushEncryptionTests {
    /// RFC 8291 §5 and Appendix A, with the presentation line breaks removed.
    enum AppendixA {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let serverPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let serverPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let userAgentPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let userAgentPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let contentKey = "oIhVW04MRdy2XN9CiKLxTg"
        static let nonce = "4h_95klXJ5E_qnoN"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmY"
            + "WAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexS"
            + "gSxsj_Qulcy4a-fN"

        static func serverKey() throws -> P256.KeyAgreement.PrivateKey {
            try P256.KeyAgreement.PrivateKey(rawRepresentation: WebPushTestBase64.decode(serverPrivate))
        }

        static func subscription() throws -> WebPushTestSubscription {
            WebPushTestSubscription(
                privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: WebPushTestBase64.decode(userAgentPrivate)),
                authSecret: try WebPushTestBase64.decode(authSecret))
        }
    }

    @Test func reproducesTheRFC8291AppendixABodyByteForByte() throws {
        let serverKey = try AppendixA.serverKey()
        #expect(WebPushTestBase64.encode(serverKey.publicKey.x963Representation) == AppendixA.serverPublic)
        let body = try WebPushEncryption.encrypt(
            plaintext: Data(AppendixA.plaintext.utf8), userAgentPublicKey: WebPushTestBase64.decode(AppendixA.userAgentPublic),
            authSecret: WebPushTestBase64.decode(AppendixA.authSecret), serverKey: serverKey,
            salt: WebPushTestBase64.decode(AppendixA.salt))
        #expect(WebPushTestBase64.encode(body) == AppendixA.body)
        #expect(body == (try WebPushTestBase64.decode(AppendixA.body)))
    }

    /// The intermediate values, so a mismatch above says which step moved.
    @Test func derivesTheAppendixContentKeyAndNonce() throws {
        let keys = try WebPushEncryption.deriveKeys(
            userAgentPublicKey: WebPushTestBase64.decode(AppendixA.userAgentPublic),
            authSecret: WebPushTestBase64.decode(AppendixA.authSecret), serverKey: AppendixA.serverKey(),
            salt: WebPushTestBase64.decode(AppendixA.salt))
        #expect(keys.contentKey.withUnsafeBytes { WebPushTestBase64.encode(Data($0)) } == AppendixA.contentKey)
        #expect(WebPushTestBase64.encode(keys.nonce.withUnsafeBytes { Data($0) }) == AppendixA.nonce)
    }

    @Test func theTestDecryptorOpensTheAppendixBody() throws {
        let plaintext = try WebPushTestDecryptor.decrypt(WebPushTestBase64.decode(AppendixA.body), subscription: AppendixA.subscription())
        #expect(String(decoding: plaintext, as: UTF8.self) == AppendixA.plaintext)
    }

    @Test func roundTripsWithFreshKeysAndWritesTheHeaderBrowsersRead() throws {
        let subscription = WebPushTestSubscription()
        let plaintext = Data("{\"notification\":{\"title\":\"Hé 👋\"}}".utf8)
        let body = try WebPushEncryption.encrypt(
            plaintext: plaintext, userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        let header = try WebPushTestDecryptor.parse(body)
        #expect(header.recordSize == 4096)
        #expect(header.keyID.count == 65 && header.keyID.first == 0x04)
        #expect(body.count == 86 + plaintext.count + 1 + 16)
        #expect(try WebPushTestDecryptor.decrypt(body, subscription: subscription) == plaintext)
    }

    /// Reusing either would reuse the AES-GCM key and nonce: every message draws both anew.
    @Test func everyMessageHasItsOwnSaltAndServerKey() throws {
        let subscription = WebPushTestSubscription()
        let first = try WebPushEncryption.encrypt(plaintext: Data("x".utf8), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        let second = try WebPushEncryption.encrypt(plaintext: Data("x".utf8), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        #expect(first.prefix(16) != second.prefix(16))
        #expect(first[21..<86] != second[21..<86])
    }

    @Test func ephemeralKeysAreDistinctValidScalarsThatAgreeWithTheSubscription() throws {
        let subscription = WebPushTestSubscription()
        let peer = try P256.KeyAgreement.PublicKey(x963Representation: subscription.publicKey)
        var seen = Set<Data>()
        for _ in 0..<200 {
            let key = WebPushEncryption.ephemeralKey()
            #expect(seen.insert(key.rawRepresentation).inserted)
            // ECDH from both sides gives the same secret: a real key pair, not just 32 bytes.
            let ours = try key.sharedSecretFromKeyAgreement(with: peer)
            let theirs = try subscription.privateKey.sharedSecretFromKeyAgreement(with: key.publicKey)
            #expect(ours == theirs)
        }
    }

    @Test func base64URLMatchesTheStandardAlphabetMapped() {
        for length in 0..<70 {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) })
            let expected = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(WebPushBase64URL.encode(data) == expected)
            #expect(WebPushBase64URL.decode(expected) == data)
        }
    }

    @Test func refusesPlaintextsThatDoNotFitOneFourKilobyteMessage() throws {
        let subscription = WebPushTestSubscription()
        #expect(WebPushEncryption.maxPlaintextSize == 3993)
        let largest = try WebPushEncryption.encrypt(
            plaintext: Data(repeating: 0x61, count: 3993), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        #expect(largest.count == 4096)
        #expect(try WebPushTestDecryptor.decrypt(largest, subscription: subscription).count == 3993)
        #expect(throws: WebPushError.payloadTooLarge(plaintextBytes: 3994, limit: 3993)) {
            try WebPushEncryption.encrypt(
                plaintext: Data(repeating: 0x61, count: 3994), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        }
        // A smaller record size lowers the limit: the single record must hold delimiter and tag.
        #expect(throws: WebPushError.payloadTooLarge(plaintextBytes: 84, limit: 83)) {
            try WebPushEncryption.encrypt(
                plaintext: Data(count: 84), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret, recordSize: 100)
        }
        #expect(throws: WebPushError.invalidRecordSize(17)) {
            try WebPushEncryption.encrypt(plaintext: Data(), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret, recordSize: 17)
        }
    }

    @Test func refusesBadKeysWithClearErrors() throws {
        let subscription = WebPushTestSubscription()
        let key = subscription.publicKey
        func encrypt(key: Data = key, auth: Data = subscription.authSecret, salt: Data = Data(count: 16)) throws {
            _ = try WebPushEncryption.encrypt(plaintext: Data("x".utf8), userAgentPublicKey: key, authSecret: auth, salt: salt)
        }
        #expect(throws: WebPushError.invalidUserAgentKey("expected 65 bytes, got 64")) { try encrypt(key: key.prefix(64)) }
        let compressed = subscription.privateKey.publicKey.compressedRepresentation
        #expect(throws: WebPushError.invalidUserAgentKey("expected 65 bytes, got 33")) { try encrypt(key: compressed) }
        var notUncompressed = key
        notUncompressed[0] = 0x05
        #expect(throws: WebPushError.invalidUserAgentKey("not an uncompressed point (first byte is not 0x04)")) { try encrypt(key: notUncompressed) }
        var offCurve = key
        offCurve[64] ^= 0x01
        #expect(throws: WebPushError.invalidUserAgentKey("not a point on P-256")) { try encrypt(key: offCurve) }
        #expect(throws: WebPushError.invalidAuthSecret(byteCount: 15)) { try encrypt(auth: Data(count: 15)) }
        #expect(throws: WebPushError.invalidSalt(byteCount: 8)) { try encrypt(salt: Data(count: 8)) }
        #expect(WebPushError.invalidAuthSecret(byteCount: 15).description == "the subscription's auth secret must be 16 bytes, got 15")
    }

    // MARK: - Interop with http_ece

    static let httpECEDecrypt = """
        import base64, json, sys
        import http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        def b64u(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
        inp = json.load(sys.stdin)
        key = ec.derive_private_key(int.from_bytes(b64u(inp["ua_private"]), "big"), ec.SECP256R1())
        plain = http_ece.decrypt(b64u(inp["body"]), private_key=key, auth_secret=b64u(inp["auth"]), version="aes128gcm")
        print(json.dumps({"plaintext": base64.b64encode(plain).decode()}))
        """

    static func decryptWithHTTPECE(_ body: Data, subscription: WebPushTestSubscription) async throws -> Data {
        let answer = try await WebPushTestPython.run(
            httpECEDecrypt,
            input: [
                "body": WebPushTestBase64.encode(body), "auth": subscription.auth,
                "ua_private": WebPushTestBase64.encode(subscription.privateKey.rawRepresentation),
            ])
        guard let text = answer["plaintext"] as? String, let plaintext = Data(base64Encoded: text) else {
            throw WebPushTestError("http_ece returned no plaintext: \(answer)")
        }
        return plaintext
    }

    /// http_ece (the library pywebpush uses, by the RFC's author) opens what Herald seals.
    @Test func httpECEDecryptsHeraldCiphertext() async throws {
        let subscription = WebPushTestSubscription()
        let plaintext = Data(#"{"notification":{"title":"Interop ✓","body":"from Herald"},"data":{"k":1}}"#.utf8)
        let body = try WebPushEncryption.encrypt(
            plaintext: plaintext, userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        #expect(try await Self.decryptWithHTTPECE(body, subscription: subscription) == plaintext)

        let largest = Data((0..<WebPushEncryption.maxPlaintextSize).map { UInt8(truncatingIfNeeded: $0) })
        let full = try WebPushEncryption.encrypt(plaintext: largest, userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        #expect(try await Self.decryptWithHTTPECE(full, subscription: subscription) == largest)
    }

    @Test func httpECEAgreesWithTheAppendixBody() async throws {
        let plaintext = try await Self.decryptWithHTTPECE(WebPushTestBase64.decode(AppendixA.body), subscription: AppendixA.subscription())
        #expect(String(decoding: plaintext, as: UTF8.self) == AppendixA.plaintext)
    }

    /// The check is real: http_ece refuses a body sealed for someone else.
    @Test func httpECERefusesACiphertextForAnotherSubscription() async throws {
        try WebPushTestPython.requireInterpreter()
        let subscription = WebPushTestSubscription()
        let body = try WebPushEncryption.encrypt(plaintext: Data("x".utf8), userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        await #expect(throws: WebPushTestError.self) { try await Self.decryptWithHTTPECE(body, subscription: WebPushTestSubscription()) }
    }
}
