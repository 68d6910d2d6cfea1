import Foundation
import HeraldCore
import JWTKit

/// Verifies bearer tokens for HTTP routes and realtime connections alike.
///
/// Why two key collections: HS256 tokens are checked only against the shared secret and
/// ES256/RS256 tokens only against the JWKS public keys, so a token that names one algorithm
/// can never be checked with the other kind of key (the classic algorithm-confusion attack),
/// and `alg: none` has no key at all.
public struct TokenVerifier: Sendable {
    public struct Settings: Sendable {
        public var issuer: String?
        public var audience: String?
        public var roles: RoleMapping
        public var leeway: TimeInterval

        public init(
            issuer: String? = nil, audience: String? = nil, roleClaim: ClaimNames = "role", roleMap: [String: Role] = [:], defaultRole: Role? = nil,
            leeway: TimeInterval = 30
        ) {
            self.issuer = issuer
            self.audience = audience
            self.roles = RoleMapping(claims: roleClaim.names, values: roleMap, defaultRole: defaultRole)
            self.leeway = leeway
        }

        public init(_ config: AuthConfig) {
            self.init(
                issuer: config.issuer, audience: config.audience, roleClaim: config.roleClaim,
                roleMap: config.roleMap.compactMapValues(Role.init(rawValue:)),
                defaultRole: config.defaultRole.flatMap(Role.init(rawValue:)), leeway: TimeInterval(config.leewaySeconds)
            )
        }
    }

    static let maxTokenBytes = 8192
    static let asymmetricAlgorithms: Set<String> = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512"]

    private let hmacKeys: JWTKeyCollection?
    private let publicKeys: PublicKeyRing?
    private let remoteKeys: RemoteJWKS?
    private let settings: Settings
    private let clock: any HeraldClock
    private let accepted = VerifiedTokenCache()

    /// - Parameters:
    ///   - hmacSecret: the HS256 secret, or nil to refuse HS256 tokens.
    ///   - jwks: a JWKS JSON document with RSA/EC public keys, or nil to refuse asymmetric tokens.
    ///   - remoteKeys: the keys of a provider's JWKS URL (instead of `jwks`), kept fresh by
    ///     the caller's service group.
    public init(hmacSecret: String?, jwks: String?, remoteKeys: RemoteJWKS? = nil, settings: Settings, clock: any HeraldClock) async throws {
        if let hmacSecret {
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: hmacSecret), digestAlgorithm: .sha256)
            hmacKeys = keys
        } else {
            hmacKeys = nil
        }
        if let remoteKeys {
            publicKeys = remoteKeys.ring
            // A key that left the provider's set no longer vouches for the tokens it signed.
            remoteKeys.onKeysRemoved { [accepted] in accepted.forgetAll() }
        } else if let jwks {
            publicKeys = PublicKeyRing(try await Self.loadPublicKeys(jwks))
        } else {
            publicKeys = nil
        }
        self.remoteKeys = remoteKeys
        self.settings = settings
        self.clock = clock
    }

    /// Loads only RSA and EC keys: a symmetric (`oct`) key in a JWKS would reopen algorithm confusion.
    static func loadPublicKeys(_ json: String) async throws -> PublicKeyRing.Keys {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        guard case .array(let keys)? = document["keys"] else {
            throw JWKSError("the JWKS has no \"keys\" array")
        }
        let collection = JWTKeyCollection()
        var added = 0
        var kids: Set<String> = []
        for key in keys {
            guard let kty = key["kty"]?.stringValue, kty == "RSA" || kty == "EC" else { continue }
            if let use = key["use"]?.stringValue, use != "sig" { continue }
            let data = try JSONEncoder().encode(key)
            let jwk = try JSONDecoder().decode(JWK.self, from: data)
            try await collection.add(jwk: jwk)
            if let kid = key["kid"]?.stringValue { kids.insert(kid) }
            added += 1
        }
        guard added > 0 else { throw JWKSError("the JWKS has no RSA or EC signing keys") }
        return .init(collection: collection, kids: kids)
    }

    public func verify(_ token: String) async throws(AuthFailure) -> Identity {
        if let known = accepted.identity(for: token) {
            // Accepted before: only the time can have changed its answer.
            guard clock.now().timeIntervalSince1970 < known.expiresAt + settings.leeway else {
                accepted.forget(token)
                throw .expired
            }
            return known
        }
        let identity = try await verifyAnew(token)
        accepted.remember(identity, for: token)
        return identity
    }

    private func verifyAnew(_ token: String) async throws(AuthFailure) -> Identity {
        guard !token.isEmpty else { throw .missingToken }
        guard token.utf8.count <= Self.maxTokenBytes else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Data(base64URLEncoded: String(parts[0])),
            let header = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            let alg = header["alg"]?.stringValue
        else { throw .malformed }
        if header["crit"] != nil { throw .unsupportedAlgorithm("crit") }

        let keys: JWTKeyCollection
        switch alg {
        case "HS256":
            guard let hmacKeys else { throw .noKeyForAlgorithm(alg) }
            keys = hmacKeys
        case _ where Self.asymmetricAlgorithms.contains(alg):
            guard let publicKeys else { throw .noKeyForAlgorithm(alg) }
            if let remoteKeys, Self.names(header["kid"]?.stringValue, aKeyMissingFrom: publicKeys.current) {
                await remoteKeys.keyMissing()
            }
            guard let current = publicKeys.current else { throw .noKeyForAlgorithm(alg) }
            keys = current.collection
        default:
            throw .unsupportedAlgorithm(alg)
        }

        let claims: TokenClaims
        do {
            claims = try await keys.verify(token, as: TokenClaims.self)
        } catch {
            throw .badSignature
        }
        return try identity(from: claims)
    }

    private func identity(from claims: TokenClaims) throws(AuthFailure) -> Identity {
        let now = clock.now().timeIntervalSince1970
        guard let exp = claims.values["exp"]?.doubleValue else { throw .missingExpiry }
        guard now < exp + settings.leeway else { throw .expired }
        if let nbfValue = claims.values["nbf"] {
            guard let nbf = nbfValue.doubleValue else { throw .malformed }
            guard now + settings.leeway >= nbf else { throw .notYetValid }
        }
        if let issuer = settings.issuer {
            guard claims.values["iss"]?.stringValue == issuer else { throw .wrongIssuer }
        }
        if let audience = settings.audience {
            switch claims.values["aud"] {
            case .string(let aud)?: guard aud == audience else { throw .wrongAudience }
            case .array(let list)?: guard list.contains(.string(audience)) else { throw .wrongAudience }
            default: throw .wrongAudience
            }
        }
        guard let subject = claims.values["sub"]?.stringValue, Self.isValidSubject(subject) else { throw .invalidSubject }
        guard let role = settings.roles.role(in: claims.values) else { throw .invalidRole }
        return Identity(userID: subject, role: role, expiresAt: exp)
    }

    /// Whether a token's `kid` is one the set lacks (no set yet counts as lacking it); a
    /// token without a `kid` is checked against the keys there are.
    static func names(_ kid: String?, aKeyMissingFrom keys: PublicKeyRing.Keys?) -> Bool {
        guard let keys else { return true }
        guard let kid else { return false }
        return !keys.kids.contains(kid)
    }

    /// 1–128 printable characters: the id is used in room names, logs and database keys.
    public static func isValidSubject(_ subject: String) -> Bool {
        !subject.isEmpty && subject.count <= 128
            && subject.unicodeScalars.allSatisfy { !CharacterSet.controlCharacters.contains($0) && !CharacterSet.whitespacesAndNewlines.contains($0) }
    }
}

public struct JWKSError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension Data {
    /// Decodes base64url without padding, as used in JWTs.
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        self.init(base64Encoded: base64)
    }
}
