import Foundation
import HeraldCore
import JWTKit

/// Signs HS256 development tokens (`herald token`) and test tokens with the server's secret.
///
/// Why only HS256: production apps get tokens from their identity provider (verified through
/// the JWKS); Herald issues tokens only for development, tests and service-to-service calls.
public struct TokenIssuer: Sendable {
    private let keys: JWTKeyCollection
    private let issuer: String?
    private let audience: String?
    private let roleClaim: String
    private let clock: any HeraldClock

    public init(secret: String, config: AuthConfig, clock: any HeraldClock = SystemClock()) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        issuer = config.issuer
        audience = config.audience
        // Development tokens carry the role in the first claim the verifier reads.
        roleClaim = config.roleClaim.names.first ?? "role"
        self.clock = clock
    }

    public func issue(userID: String, role: Role, ttl: TimeInterval, extraClaims: [String: JSONValue] = [:]) async throws -> String {
        let now = clock.now().timeIntervalSince1970.rounded(.down)
        var values = extraClaims
        values["sub"] = .string(userID)
        values["iat"] = .number(now)
        values["exp"] = .number(now + ttl.rounded(.down))
        // A dotted role claim (`app_metadata.role`) is written as nested objects.
        let path = roleClaim.split(separator: ".").map(String.init)
        values = Self.setting(.string(role.rawValue), at: path[...], in: values)
        if let issuer { values["iss"] = .string(issuer) }
        if let audience { values["aud"] = .string(audience) }
        return try await keys.sign(TokenClaims(values))
    }

    private static func setting(_ value: JSONValue, at path: ArraySlice<String>, in object: [String: JSONValue]) -> [String: JSONValue] {
        guard let key = path.first else { return object }
        var object = object
        if path.count == 1 {
            object[key] = value
        } else {
            object[key] = .object(setting(value, at: path.dropFirst(), in: object[key]?.objectValue ?? [:]))
        }
        return object
    }
}
