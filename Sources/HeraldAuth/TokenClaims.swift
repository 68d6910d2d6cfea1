import HeraldCore
import JWTKit

/// A token's payload kept as raw JSON, so the role claim's name and place are configurable
/// and time claims are checked by `TokenVerifier` with Herald's injected clock.
struct TokenClaims: JWTPayload {
    var values: [String: JSONValue]

    init(_ values: [String: JSONValue]) { self.values = values }

    init(from decoder: any Decoder) throws {
        values = try [String: JSONValue](from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try values.encode(to: encoder)
    }

    /// Signature only: time, issuer and audience are checked by the verifier.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
