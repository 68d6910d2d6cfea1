import HTTPTypes
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

/// Answers 401 for a request whose token was present but refused, so a client with a
/// broken token learns it at once instead of being treated as anonymous — except on the
/// routes anyone may call (stops, departures, routes, planning, alerts).
///
/// Why public routes serve such a request as anonymous: a transit app keeps showing stops
/// and departures while its token has lapsed (a phone that slept past `exp`, a refresh that
/// failed offline); answering 401 there would blank the app until the identity provider is
/// reachable again. The request gets what anyone gets, under the anonymous rate limits
/// (the limiter already counted it against the client's address), and the answer says the
/// token was set aside in `Herald-Token-Ignored` (the reason: `expired`, `bad_signature`, …),
/// so the app can refresh it in the background.
struct CredentialCheckMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    static let ignoredHeader = HTTPField.Name("Herald-Token-Ignored")!

    /// `METHOD /path` (the router's path pattern) of every route open to anyone.
    let publicRoutes: Set<String>

    init(operations: [APIOperation]) {
        publicRoutes = Set(
            operations.compactMap { operation in
                if case .public_ = operation.access { return "\(operation.method) \(operation.path)" }
                return nil
            })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard case .failed(let failure) = context.authentication else {
            return try await next(request, context)
        }
        guard publicRoutes.contains("\(request.method.rawValue) \(context.endpointPath ?? request.uri.path)") else {
            throw APIError.unauthorized(failure.message)
        }
        var anonymous = context
        anonymous.authentication = .anonymous
        do {
            var response = try await next(request, anonymous)
            response.headers[Self.ignoredHeader] = failure.reason
            return response
        } catch var error as APIError {
            error.headers[Self.ignoredHeader.rawName] = failure.reason
            throw error
        }
    }
}
