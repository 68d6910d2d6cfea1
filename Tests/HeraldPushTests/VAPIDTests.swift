import Crypto
import Foundation
import HeraldCore
import HeraldMockProviders
import JWTKit
import Testing

@testable import HeraldPush

/// VAPID (RFC 8292): the token push services check, the key forms operators configure, the
/// token cache, and PyJWT's opinion of our tokens.
@Suite struct VAPIDTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The three parts of a JWS, decoded.
    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any], signature: Data, signingInput: String) {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count == 3 else { throw WebPushTestError("not a JWS: \(token)") }
        func object(_ text: String) throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: WebPushTestBase64.decode(text)) as? [String: Any] else {
                throw WebPushTestError("not a JSON object: \(text)")
            }
            return object
        }
        return (try object(pieces[0]), try object(pieces[1]), try WebPushTestBase64.decode(pieces[2]), pieces[0] + "." + pieces[1])
    }

    /// Splits `vapid t=…, k=…`.
    static func parseAuthorization(_ value: String) throws -> (token: String, key: String) {
        guard value.hasPrefix("vapid ") else { throw WebPushTestError("not the vapid scheme: \(value)") }
        var token: String?
        var key: String?
        for parameter in value.dropFirst(6).split(separator: ",") {
            let trimmed = parameter.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("t=") { token = String(trimmed.dropFirst(2)) }
            if trimmed.hasPrefix("k=") { key = String(trimmed.dropFirst(2)) }
        }
        guard let token, let key else { throw WebPushTestError("t= or k= missing: \(value)") }
        return (token, key)
    }

    @Test func authorizationCarriesAnES256TokenForTheEndpointsOrigin() async throws {
        let key = VAPIDKey.generate()
        let value = try key.authorization(endpoint: "https://localhost:8443/push/abc?x=1", subject: "mailto:ops@example.com", now: Self.now)
        let (token, k) = try Self.parseAuthorization(value)
        #expect(k == key.publicKeyBase64URL)

        let (header, claims, signature, signingInput) = try Self.parts(token)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["typ"] as? String == "JWT")
        #expect(claims["aud"] as? String == "https://localhost:8443")
        #expect(claims["sub"] as? String == "mailto:ops@example.com")
        #expect(claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
        #expect(Set(claims.keys) == ["aud", "exp", "sub"])

        // The signature is raw r||s and verifies with the key in k=.
        #expect(signature.count == 64)
        let publicKey = try P256.Signing.PublicKey(x963Representation: WebPushTestBase64.decode(k))
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(publicKey.isValidSignature(ecdsa, for: Data(signingInput.utf8)))

        // And JWTKit, an independent JWS implementation, accepts it.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: publicKey))
        let verified = try await keys.verify(token, as: VAPIDTestClaims.self)
        #expect(verified.aud.value == ["https://localhost:8443"])
        #expect(verified.sub.value == "mailto:ops@example.com")
    }

    @Test func audienceIsTheOriginWithANonDefaultPort() throws {
        #expect(try VAPIDKey.audience(of: "https://localhost:8443/push/abc") == "https://localhost:8443")
        #expect(try VAPIDKey.audience(of: "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91b") == "https://fcm.googleapis.com")
        #expect(try VAPIDKey.audience(of: "https://Updates.Push.Services.Mozilla.COM:443/wpush/v2/x") == "https://updates.push.services.mozilla.com")
        #expect(try VAPIDKey.audience(of: "http://127.0.0.1:80/x") == "http://127.0.0.1")
        #expect(try VAPIDKey.audience(of: "http://127.0.0.1:8080/x") == "http://127.0.0.1:8080")
        #expect(try VAPIDKey.audience(of: "https://[::1]:8443/push") == "https://[::1]:8443")
        for bad in ["ftp://example.com/x", "not a url", "/push/relative", "https:///nohost", ""] {
            #expect(throws: WebPushError.invalidEndpoint(bad)) { try VAPIDKey.audience(of: bad) }
        }
    }

    @Test func tokensLiveAtMostTwentyFourHours() throws {
        let key = VAPIDKey.generate()
        let day = try key.token(audience: "https://a.example", subject: "mailto:a@example.com", now: Self.now, ttl: .seconds(86_400))
        #expect(try Self.parts(day).claims["exp"] as? Int == 1_800_000_000 + 86_400)
        #expect(throws: WebPushError.invalidTokenLifetime(seconds: 86_401)) {
            try key.token(audience: "https://b.example", subject: "mailto:a@example.com", now: Self.now, ttl: .seconds(86_401))
        }
        #expect(throws: WebPushError.invalidTokenLifetime(seconds: 0)) {
            try key.token(audience: "https://b.example", subject: "mailto:a@example.com", now: Self.now, ttl: .zero)
        }
        // A fractional "now" never stretches the lifetime past what was asked.
        let fractional = try key.token(
            audience: "https://c.example", subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(0.9), ttl: .seconds(86_400))
        #expect(try Self.parts(fractional).claims["exp"] as? Int == 1_800_000_000 + 86_400)
    }

    /// One signature per audience per ~11 hours, not per message.
    @Test func reusesTheTokenUntilAnHourBeforeItExpires() throws {
        let key = VAPIDKey.generate()
        let endpoint = "https://push.example/one"
        let first = try key.authorization(endpoint: endpoint, subject: "mailto:a@example.com", now: Self.now)
        #expect(try key.authorization(endpoint: "https://push.example/two", subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(60)) == first)
        #expect(try key.authorization(endpoint: endpoint, subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(11 * 3600 - 1)) == first)
        // Copies share the cache.
        let copy = key
        #expect(try copy.authorization(endpoint: endpoint, subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(5)) == first)

        let renewed = try key.authorization(endpoint: endpoint, subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(11 * 3600))
        #expect(renewed != first)
        #expect(try Self.parts(Self.parseAuthorization(renewed).token).claims["exp"] as? Int == 1_800_000_000 + 23 * 3600)

        // Another origin, another subject or a clock that went backwards: a new token.
        #expect(try key.authorization(endpoint: "https://other.example/x", subject: "mailto:a@example.com", now: Self.now) != first)
        #expect(try key.authorization(endpoint: endpoint, subject: "mailto:b@example.com", now: Self.now) != first)
        let backwards = try key.authorization(endpoint: endpoint, subject: "mailto:a@example.com", now: Self.now.addingTimeInterval(-60))
        #expect(try Self.parts(Self.parseAuthorization(backwards).token).claims["exp"] as? Int == 1_800_000_000 - 60 + 12 * 3600)
    }

    @Test func shortLivedTokensAreRenewedHalfwayThrough() throws {
        let key = VAPIDKey.generate()
        let first = try key.token(audience: "https://a.example", subject: "mailto:a@example.com", now: Self.now, ttl: .seconds(600))
        #expect(try key.token(audience: "https://a.example", subject: "mailto:a@example.com", now: Self.now + 299, ttl: .seconds(600)) == first)
        #expect(try key.token(audience: "https://a.example", subject: "mailto:a@example.com", now: Self.now + 300, ttl: .seconds(600)) != first)
    }

    // MARK: - Keys

    @Test func loadsTheRawScalarAndPrintsTheUncompressedPublicKey() throws {
        let key = VAPIDKey.generate()
        #expect(key.privateKeyBase64URL.count == 43)
        let loaded = try VAPIDKey(base64URL: key.privateKeyBase64URL)
        #expect(loaded.publicKeyBase64URL == key.publicKeyBase64URL)
        let point = try WebPushTestBase64.decode(key.publicKeyBase64URL)
        #expect(point.count == 65 && point.first == 0x04)
        #expect(key.publicKeyBase64URL.count == 87 && !key.publicKeyBase64URL.contains("="))
        // Padding and surrounding whitespace, as pasted from elsewhere, are tolerated.
        #expect(try VAPIDKey(base64URL: " \(key.privateKeyBase64URL)=\n").publicKeyBase64URL == key.publicKeyBase64URL)
    }

    @Test func loadsPKCS8AndSEC1PEM() async throws {
        let signing = P256.Signing.PrivateKey()
        let expected = WebPushTestBase64.encode(signing.publicKey.x963Representation)
        #expect(signing.pemRepresentation.contains("BEGIN PRIVATE KEY"))
        #expect(try VAPIDKey(pem: signing.pemRepresentation).publicKeyBase64URL == expected)
        // A PEM pasted into vapid_private_key works too.
        #expect(try VAPIDKey(base64URL: signing.pemRepresentation).publicKeyBase64URL == expected)

        // What `openssl ecparam -genkey` writes: SEC1 "EC PRIVATE KEY".
        let sec1 = try await Self.opensslSEC1Key()
        #expect(sec1.contains("BEGIN EC PRIVATE KEY"))
        let fromSEC1 = try VAPIDKey(pem: sec1)
        #expect(try WebPushTestBase64.decode(fromSEC1.publicKeyBase64URL).count == 65)
    }

    @Test func loadsFromConfigWithExactlyOneSource() throws {
        let key = VAPIDKey.generate()
        #expect(
            try VAPIDKey(config: WebPushConfig(vapidPrivateKey: key.privateKeyBase64URL, subject: "mailto:a@b.c")).publicKeyBase64URL == key.publicKeyBase64URL)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString).pem")
        let signing = P256.Signing.PrivateKey()
        try signing.pemRepresentation.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try VAPIDKey(config: WebPushConfig(vapidPrivateKeyFile: file.path, subject: "mailto:a@b.c"))
        #expect(fromFile.publicKeyBase64URL == WebPushTestBase64.encode(signing.publicKey.x963Representation))

        #expect(throws: WebPushError.invalidVAPIDKey("set vapid_private_key or vapid_private_key_file, not both")) {
            try VAPIDKey(config: WebPushConfig(vapidPrivateKey: key.privateKeyBase64URL, vapidPrivateKeyFile: file.path, subject: "mailto:a@b.c"))
        }
        #expect(throws: WebPushError.invalidVAPIDKey("set vapid_private_key or vapid_private_key_file")) {
            try VAPIDKey(config: WebPushConfig(subject: "mailto:a@b.c"))
        }
        #expect(throws: WebPushError.self) {
            try VAPIDKey(config: WebPushConfig(vapidPrivateKeyFile: "/nonexistent/vapid.pem", subject: "mailto:a@b.c"))
        }
    }

    @Test func refusesMalformedKeysWithoutCrashing() throws {
        let raw = P256.Signing.PrivateKey().rawRepresentation
        #expect(throws: WebPushError.invalidVAPIDKey("expected the base64url of a 32-byte P-256 scalar (43 characters), got 31 bytes")) {
            try VAPIDKey(base64URL: WebPushTestBase64.encode(raw.prefix(31)))
        }
        #expect(throws: WebPushError.invalidVAPIDKey("expected the base64url of a 32-byte P-256 scalar (43 characters), got 65 bytes")) {
            // The public key pasted where the private one belongs: a common mistake.
            try VAPIDKey(base64URL: VAPIDKey.generate().publicKeyBase64URL)
        }
        #expect(throws: WebPushError.invalidVAPIDKey("not base64url text")) { try VAPIDKey(base64URL: "abc+/def") }
        #expect(throws: WebPushError.invalidVAPIDKey("not base64url text")) { try VAPIDKey(base64URL: "a") }
        #expect(throws: WebPushError.invalidVAPIDKey("the 32 bytes are not a valid P-256 private scalar")) {
            try VAPIDKey(base64URL: WebPushTestBase64.encode(Data(count: 32)))
        }
        #expect(throws: WebPushError.invalidVAPIDKey("the 32 bytes are not a valid P-256 private scalar")) {
            try VAPIDKey(base64URL: WebPushTestBase64.encode(Data(repeating: 0xFF, count: 32)))
        }
        #expect(throws: WebPushError.self) { try VAPIDKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----") }
    }

    @Test func subjectsMustBeMailtoOrHTTPS() throws {
        try VAPIDKey.validateSubject("mailto:ops@example.com")
        try VAPIDKey.validateSubject("https://example.com/contact")
        for bad in ["ops@example.com", "mailto:", "http://example.com", "https://", "mailto:a b@example.com", ""] {
            #expect(throws: WebPushError.invalidSubject(bad)) { try VAPIDKey.validateSubject(bad) }
        }
    }

    // MARK: - Interop with PyJWT

    static let pyJWTVerify = """
        import base64, json, sys
        import jwt
        from cryptography.hazmat.primitives.asymmetric import ec
        def b64u(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
        inp = json.load(sys.stdin)
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64u(inp["k"]))
        claims = jwt.decode(inp["token"], key, algorithms=["ES256"], audience=inp["aud"])
        header = jwt.get_unverified_header(inp["token"])
        try:
            jwt.decode(inp["token"], key, algorithms=["ES256"], audience="https://elsewhere.example")
            raise SystemExit("PyJWT accepted a token for another audience")
        except jwt.InvalidAudienceError:
            pass
        other = ec.generate_private_key(ec.SECP256R1()).public_key()
        try:
            jwt.decode(inp["token"], other, algorithms=["ES256"], audience=inp["aud"])
            raise SystemExit("PyJWT accepted the signature with another key")
        except jwt.InvalidSignatureError:
            pass
        print(json.dumps({"claims": claims, "header": header}))
        """

    /// PyJWT, with the public key built by `cryptography` from the uncompressed point a browser
    /// would be given, verifies signature, algorithm, audience and expiry of Herald's token.
    @Test func pyJWTVerifiesHeraldTokens() async throws {
        let key = VAPIDKey.generate()
        let endpoint = "https://localhost:8443/push/interop"
        // PyJWT checks exp against the real clock, so the token is made now.
        let (token, k) = try Self.parseAuthorization(
            key.authorization(endpoint: endpoint, subject: "mailto:ops@example.com", now: Date()))
        let answer = try await WebPushTestPython.run(Self.pyJWTVerify, input: ["token": token, "k": k, "aud": "https://localhost:8443"])
        let claims = answer["claims"] as? [String: Any]
        let header = answer["header"] as? [String: Any]
        #expect(claims?["aud"] as? String == "https://localhost:8443")
        #expect(claims?["sub"] as? String == "mailto:ops@example.com")
        #expect(header?["alg"] as? String == "ES256")
        let exp = try #require(claims?["exp"] as? Int)
        #expect(exp > Int(Date().timeIntervalSince1970) && exp <= Int(Date().timeIntervalSince1970) + 86_400)
    }

    /// The check is real: PyJWT refuses an expired Herald token.
    @Test func pyJWTRefusesAnExpiredHeraldToken() async throws {
        try WebPushTestPython.requireInterpreter()
        let key = VAPIDKey.generate()
        let token = try key.token(
            audience: "https://localhost:8443", subject: "mailto:ops@example.com", now: Date(timeIntervalSinceNow: -7200), ttl: .seconds(3600))
        await #expect(throws: WebPushTestError.self) {
            try await WebPushTestPython.run(Self.pyJWTVerify, input: ["token": token, "k": key.publicKeyBase64URL, "aud": "https://localhost:8443"])
        }
    }

    static func opensslSEC1Key() async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-sec1-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: file) }
        let finished = try await ChildProcess.run("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file.path])
        guard finished.status == 0 else { throw WebPushTestError("openssl ecparam failed: \(finished.errorText)") }
        return try String(contentsOf: file, encoding: .utf8)
    }
}

/// The VAPID claims, for JWTKit's verification (expiry is checked separately against the test clock).
struct VAPIDTestClaims: JWTPayload {
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
