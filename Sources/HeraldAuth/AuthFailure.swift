/// Why a token was refused. The message is safe to show a client (it never echoes the token
/// or key material); the case lets tests and logs tell the reasons apart.
public enum AuthFailure: Error, Sendable, Equatable {
    case missingToken
    case malformed
    case unsupportedAlgorithm(String)
    case noKeyForAlgorithm(String)
    case badSignature
    case missingExpiry
    case expired
    case notYetValid
    case wrongIssuer
    case wrongAudience
    case invalidSubject
    case invalidRole

    public var message: String {
        switch self {
        case .missingToken: "Authentication is required."
        case .malformed: "The token is malformed."
        case .unsupportedAlgorithm(let alg): "Tokens signed with '\(alg.prefix(16))' are not accepted."
        case .noKeyForAlgorithm(let alg): "No key is configured for tokens signed with \(alg.prefix(16))."
        case .badSignature: "The token signature is invalid."
        case .missingExpiry: "The token has no expiry (exp)."
        case .expired: "The token has expired."
        case .notYetValid: "The token is not valid yet (nbf)."
        case .wrongIssuer: "The token was issued by an unexpected issuer."
        case .wrongAudience: "The token is not meant for this audience."
        case .invalidSubject: "The token's subject (sub) is missing or invalid."
        case .invalidRole: "The token carries no valid role."
        }
    }
}
