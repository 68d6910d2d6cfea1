import HeraldAuth
import HeraldCore
import Hummingbird
import NIOCore

/// What Herald knows about a request while it moves through middleware to its route.
///
/// Why a custom context: the request id, the caller's identity and the client address are
/// set once by middleware and read by every route and error response.
public struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Echoed from `X-Request-ID` or generated; on every log line and in every envelope.
    public var requestID: String = ""
    public var authentication: Authentication = .anonymous
    public let remoteAddress: SocketAddress?
    /// The client IP used for per-IP rate limits (the peer, or `X-Forwarded-For` when trusted).
    public var clientIP: String = "unknown"
    /// The body limit in force (set from config by `BodyLimitMiddleware`).
    public var maxBodyBytes: Int = 1_048_576
    public var maxUploadSize: Int { maxBodyBytes }

    public enum Authentication: Sendable, Equatable {
        case anonymous
        case authenticated(Identity)
        case failed(AuthFailure)
    }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The verified caller, if any.
    public var identity: Identity? {
        if case .authenticated(let identity) = authentication { return identity }
        return nil
    }

    /// The verified caller, or 401 with the reason the token was refused.
    public func requireIdentity() throws -> Identity {
        switch authentication {
        case .authenticated(let identity): return identity
        case .failed(let failure): throw APIError.unauthorized(failure.message)
        case .anonymous: throw APIError.unauthorized()
        }
    }

    /// The verified caller when their role is one of `roles`; 401 without a token, 403 otherwise.
    public func require(_ roles: Role...) throws -> Identity {
        let identity = try requireIdentity()
        guard roles.contains(identity.role) else {
            throw APIError.forbidden("This action needs the \(roles.map(\.rawValue).joined(separator: " or ")) role.")
        }
        return identity
    }
}
