import HeraldAuth
import HeraldCore
import Hummingbird

/// Verifies the bearer token, if any, and records the outcome on the context.
///
/// Why it does not refuse by itself: the rate limiter must see who the caller is (a user's
/// bucket, or the IP's for anonymous and failed callers) before a 401 is answered, so that
/// guessing tokens is rate limited too. `CredentialCheckMiddleware` answers the 401.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let verifier: TokenVerifier
    let users: UserDirectory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            return try await next(request, context)
        }
        var context = context
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        if parts.count == 2, parts[0].lowercased() == "bearer" {
            do {
                let identity = try await verifier.verify(String(parts[1]).trimmingCharacters(in: .whitespaces))
                try await users.ensureKnown(userID: identity.userID, role: identity.role.rawValue)
                context.authentication = .authenticated(identity)
                context.logger[metadataKey: "user_id"] = .string(identity.userID)
            } catch let failure as AuthFailure {
                context.authentication = .failed(failure)
            }
        } else {
            context.authentication = .failed(.malformed)
        }
        return try await next(request, context)
    }
}

/// Answers 401 for a request whose token was present but refused, on any route, so a client
/// with a broken token learns it at once instead of being treated as anonymous.
struct CredentialCheckMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if case .failed(let failure) = context.authentication {
            throw APIError.unauthorized(failure.message)
        }
        return try await next(request, context)
    }
}
