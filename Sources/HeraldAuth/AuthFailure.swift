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

    /// A short stable name of the reason, for headers and logs (`expired`, `bad_signature`).
    public var reason: String {
        switch self {
        case .missingToken: "missing"
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .noKeyForAlgorithm: "no_key"
        case .badSignature: "bad_signature"
        case .missingExpiry: "missing_expiry"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .invalidSubject: "invalid_subject"
        case .invalidRole: "invalid_role"
        }
    }

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
