import Crypto
import Foundation
import HeraldAuth
import HeraldCore
import JWTKit
import Testing

/// A token payload of arbitrary claims, to craft valid and invalid tokens alike.
struct RawClaims: JWTPayload {
    var values: [String: JSONValue]
    init(_ values: [String: JSONValue]) { self.values = values }
    init(from decoder: any Decoder) throws { values = try [String: JSONValue](from: decoder) }
    func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Builds `header.payload.signature` by hand, for tokens no honest library would sign.
func handmadeToken(header: JSONValue, claims: JSONValue, sign: (Data) -> Data = { _ in Data() }) throws -> String {
    let input = base64URL(try JSONEncoder().encode(header)) + "." + base64URL(try JSONEncoder().encode(claims))
    return input + "." + base64URL(sign(Data(input.utf8)))
}

@Suite struct TokenVerifierTests {
    let secret = "0123456789abcdef0123456789abcdef-secret"
    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Double { clock.now().timeIntervalSince1970 }

    func verifier(jwks: String? = nil, settings: TokenVerifier.Settings = .init(), hmac: Bool = true) async throws -> TokenVerifier {
        try await TokenVerifier(hmacSecret: hmac ? secret : nil, jwks: jwks, settings: settings, clock: clock)
    }

    func hs256(_ claims: [String: JSONValue], secret: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret ?? self.secret), digestAlgorithm: .sha256)
        return try await keys.sign(RawClaims(claims))
    }

    func claims(sub: String = "user-1", role: String = "driver", exp: Double? = nil) -> [String: JSONValue] {
        var values: [String: JSONValue] = ["sub": .string(sub), "role": .string(role)]
        values["exp"] = .number(exp ?? now + 600)
        return values
    }

    @Test func acceptsAValidHS256Token() async throws {
        let identity = try await verifier().verify(try await hs256(claims()))
        #expect(identity == Identity(userID: "user-1", role: .driver, expiresAt: now + 600))
    }

    @Test func tokensFromTheIssuerVerify() async throws {
        let issuer = await TokenIssuer(secret: secret, config: AuthConfig(), clock: clock)
        let token = try await issuer.issue(userID: "svc", role: .service, ttl: 60)
        #expect(try await verifier().verify(token).role == .service)
    }

    @Test func refusesAnExpiredTokenBeyondTheLeeway() async throws {
        let token = try await hs256(claims(exp: now - 10))
        // Within 30 s of leeway it still passes; past it, it does not.
        #expect(try await verifier().verify(token).userID == "user-1")
        clock.advance(by: 21)
        await #expect(throws: AuthFailure.expired) { try await verifier().verify(token) }
    }

    /// The same verifier answers a token it accepted before from memory: the answer must
    /// still follow the clock, and a look-alike token must still be checked in full.
    @Test func aRememberedTokenStillExpiresAndLookAlikesAreStillChecked() async throws {
        let verifier = try await verifier()
        let token = try await hs256(claims(exp: now + 5))
        #expect(try await verifier.verify(token).userID == "user-1")
        #expect(try await verifier.verify(token).userID == "user-1")
        // Same header and claims, another key: refused although its twin was accepted.
        let forged = try await hs256(claims(exp: now + 5), secret: "another-secret-another-secret-another")
        await #expect(throws: AuthFailure.badSignature) { try await verifier.verify(forged) }
        // The claims of the accepted token with a signature cut short.
        await #expect(throws: AuthFailure.badSignature) { try await verifier.verify(String(token.dropLast(2))) }
        clock.advance(by: 5 + 31)
        await #expect(throws: AuthFailure.expired) { try await verifier.verify(token) }
        await #expect(throws: AuthFailure.expired) { try await verifier.verify(token) }
    }

    @Test func requiresAnExpiry() async throws {
        var values = claims()
        values["exp"] = nil
        let token = try await hs256(values)
        await #expect(throws: AuthFailure.missingExpiry) { try await verifier().verify(token) }
    }

    @Test func refusesATokenBeforeItsNotBefore() async throws {
        var values = claims()
        values["nbf"] = .number(now + 120)
        let token = try await hs256(values)
        await #expect(throws: AuthFailure.notYetValid) { try await verifier().verify(token) }
        clock.advance(by: 100)
        #expect(try await verifier().verify(token).userID == "user-1")
    }

    @Test func checksIssuerAndAudienceWhenConfigured() async throws {
        let settings = TokenVerifier.Settings(issuer: "https://auth.example", audience: "herald")
        var good = claims()
        good["iss"] = "https://auth.example"
        good["aud"] = ["other", "herald"]
        #expect(try await verifier(settings: settings).verify(try await hs256(good)).userID == "user-1")

        var wrongIssuer = good
        wrongIssuer["iss"] = "https://evil.example"
        await #expect(throws: AuthFailure.wrongIssuer) { try await verifier(settings: settings).verify(try await hs256(wrongIssuer)) }

        var wrongAudience = good
        wrongAudience["aud"] = "someone-else"
        await #expect(throws: AuthFailure.wrongAudience) { try await verifier(settings: settings).verify(try await hs256(wrongAudience)) }

        var noAudience = good
        noAudience["aud"] = nil
        await #expect(throws: AuthFailure.wrongAudience) { try await verifier(settings: settings).verify(try await hs256(noAudience)) }
    }

    @Test func refusesATokenSignedWithAnotherSecret() async throws {
        let token = try await hs256(claims(), secret: "another-secret-another-secret-12345")
        await #expect(throws: AuthFailure.badSignature) { try await verifier().verify(token) }
    }

    @Test func refusesATamperedPayload() async throws {
        let token = try await hs256(claims(role: "customer"))
        let parts = token.split(separator: ".")
        let forged = parts[0] + "." + base64URL(try JSONEncoder().encode(JSONValue.object(claims(role: "operator")))) + "." + parts[2]
        await #expect(throws: AuthFailure.badSignature) { try await verifier().verify(String(forged)) }
    }

    @Test func refusesAlgNone() async throws {
        let token = try handmadeToken(header: ["alg": "none", "typ": "JWT"], claims: .object(claims()))
        await #expect(throws: AuthFailure.unsupportedAlgorithm("none")) { try await verifier().verify(token) }
    }

    @Test func refusesAlgorithmsItDoesNotAccept() async throws {
        let token = try handmadeToken(header: ["alg": "HS512"], claims: .object(claims())) { input in
            Data(HMAC<SHA512>.authenticationCode(for: input, using: SymmetricKey(data: Data(secret.utf8))))
        }
        await #expect(throws: AuthFailure.unsupportedAlgorithm("HS512")) { try await verifier().verify(token) }
    }

    @Test func refusesCriticalHeaderExtensions() async throws {
        let token = try handmadeToken(header: ["alg": "HS256", "crit": ["exp"]], claims: .object(claims())) { input in
            Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(secret.utf8))))
        }
        await #expect(throws: AuthFailure.unsupportedAlgorithm("crit")) { try await verifier().verify(token) }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "!!!.???.***", String(repeating: "a", count: 9000)])
    func refusesMalformedTokens(token: String) async throws {
        await #expect(throws: AuthFailure.self) { try await verifier().verify(token) }
    }

    @Test(arguments: ["", "has space", String(repeating: "x", count: 129)])
    func refusesInvalidSubjects(sub: String) async throws {
        let token = try await hs256(claims(sub: sub))
        await #expect(throws: AuthFailure.invalidSubject) { try await verifier().verify(token) }
    }

    @Test func refusesUnknownRolesUnlessADefaultIsConfigured() async throws {
        let token = try await hs256(claims(role: "authenticated"))
        await #expect(throws: AuthFailure.invalidRole) { try await verifier().verify(token) }
        let lenient = try await verifier(settings: .init(defaultRole: .customer))
        #expect(try await lenient.verify(token).role == .customer)
    }

    @Test func readsANestedRoleClaim() async throws {
        var values = claims(role: "authenticated")
        values["app_metadata"] = ["herald_role": "operator"]
        let token = try await hs256(values)
        let nested = try await verifier(settings: .init(roleClaim: "app_metadata.herald_role"))
        #expect(try await nested.verify(token).role == .operator)

        let issuer = await TokenIssuer(
            secret: secret,
            config: {
                var c = AuthConfig()
                c.roleClaim = "app_metadata.herald_role"
                return c
            }(), clock: clock)
        #expect(try await nested.verify(try await issuer.issue(userID: "u", role: .driver, ttl: 60)).role == .driver)
    }

    // MARK: JWKS (ES256)

    func jwks(_ keys: [(kid: String, key: ES256PrivateKey)]) throws -> String {
        let entries: [JSONValue] = keys.map { entry in
            let parameters = entry.key.parameters!
            return [
                "kty": "EC", "crv": "P-256", "kid": .string(entry.kid), "use": "sig", "alg": "ES256", "x": .string(parameters.x), "y": .string(parameters.y),
            ]
        }
        return String(decoding: try JSONEncoder().encode(JSONValue.object(["keys": .array(entries)])), as: UTF8.self)
    }

    func es256(_ claims: [String: JSONValue], key: ES256PrivateKey, kid: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(RawClaims(claims), kid: JWKIdentifier(string: kid))
    }

    @Test func acceptsES256TokensFromTheJWKSByKid() async throws {
        let first = ES256PrivateKey()
        let second = ES256PrivateKey()
        let verifier = try await verifier(jwks: try jwks([("k1", first), ("k2", second)]))
        #expect(try await verifier.verify(try await es256(claims(sub: "a"), key: first, kid: "k1")).userID == "a")
        #expect(try await verifier.verify(try await es256(claims(sub: "b"), key: second, kid: "k2")).userID == "b")
    }

    @Test func refusesES256TokensFromAnUnknownKey() async throws {
        let verifier = try await verifier(jwks: try jwks([("k1", ES256PrivateKey())]))
        let token = try await es256(claims(), key: ES256PrivateKey(), kid: "k1")
        await #expect(throws: AuthFailure.badSignature) { try await verifier.verify(token) }
    }

    @Test func refusesAsymmetricTokensWithoutAJWKSAndHS256WithoutASecret() async throws {
        let key = ES256PrivateKey()
        let token = try await es256(claims(), key: key, kid: "k1")
        await #expect(throws: AuthFailure.noKeyForAlgorithm("ES256")) { try await verifier().verify(token) }
        let onlyJWKS = try await verifier(jwks: try jwks([("k1", key)]), hmac: false)
        await #expect(throws: AuthFailure.noKeyForAlgorithm("HS256")) { try await onlyJWKS.verify(try await hs256(claims())) }
    }

    /// The classic confusion attack: an HS256 token whose HMAC key is the issuer's *public* key.
    @Test func refusesHS256TokensKeyedWithThePublicKey() async throws {
        let key = ES256PrivateKey()
        let document = try jwks([("k1", key)])
        let verifier = try await verifier(jwks: document, hmac: false)
        let token = try handmadeToken(header: ["alg": "HS256", "kid": "k1"], claims: .object(claims())) { input in
            Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(document.utf8))))
        }
        await #expect(throws: AuthFailure.noKeyForAlgorithm("HS256")) { try await verifier.verify(token) }
        // With an HS256 secret configured too, the public key still is not an HMAC key.
        let both = try await self.verifier(jwks: document)
        await #expect(throws: AuthFailure.badSignature) { try await both.verify(token) }
    }

    @Test func ignoresSymmetricKeysInAJWKS() async throws {
        let document = #"{"keys":[{"kty":"oct","kid":"s","k":"c2VjcmV0"}]}"#
        await #expect(throws: (any Error).self) { try await verifier(jwks: document) }
    }
}
