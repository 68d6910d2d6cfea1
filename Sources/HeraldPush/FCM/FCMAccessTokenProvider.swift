import AsyncHTTPClient
import Foundation
import HeraldCore
import JWTKit
import NIOCore

/// Google OAuth2 access tokens for FCM, from a service account (the JWT-bearer grant).
///
/// Why one shared refresh: when the cached token lapses, every in-flight push wants a new one
/// at the same moment; without sharing, a worker with 32 concurrent sends would make 32 token
/// requests (and Google rate-limits that endpoint). Callers wait for the single refresh, and a
/// caller that is cancelled (its delivery deadline passed) stops waiting without cancelling
/// the refresh the others depend on.
///
/// Why refresh 5 minutes early: a token that expires while a request is on the wire costs a
/// 401 and a second round trip; the margin also absorbs clock skew with Google.
public actor FCMAccessTokenProvider {
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The assertion's lifetime; Google refuses more than an hour.
    static let assertionLifetime = 3600
    /// How long before expiry a cached token is replaced.
    static let refreshMargin: TimeInterval = 300
    /// How long a refusal by the token endpoint is repeated without asking again.
    ///
    /// Why: a bad key makes every queued push ask; holding the answer briefly keeps a backlog
    /// of thousands from hammering the token endpoint while each still fails at once.
    static let rejectionHold: TimeInterval = 60

    struct CachedToken: Sendable {
        var value: String
        var refreshAt: Date
    }

    private let account: ServiceAccount
    private let tokenURL: String
    private let http: PushHTTP
    private let clock: any HeraldClock
    private let timeout: Duration
    private var signer: JWTKeyCollection?
    private var cached: CachedToken?
    private var rejection: (error: FCMAccessTokenError, until: Date)?
    private var refreshing: Task<Void, Never>?
    private var waiters: [Int: CheckedContinuation<String, any Error>] = [:]
    private var nextWaiter = 0

    /// - Parameters:
    ///   - tokenURL: where to exchange the assertion; the account's `token_uri` when nil. The
    ///     assertion's `aud` stays the account's `token_uri` either way, because that is what
    ///     Google checks even when the request goes through a proxy.
    ///   - timeout: bound on one token request.
    public init(
        account: ServiceAccount, tokenURL: String? = nil, http: PushHTTP, clock: any HeraldClock, timeout: Duration = .seconds(10)
    ) {
        self.account = account
        self.tokenURL = tokenURL ?? account.tokenURI
        self.http = http
        self.clock = clock
        self.timeout = timeout
    }

    /// A valid access token: the cached one, or the result of the (shared) refresh.
    ///
    /// Throws `FCMAccessTokenError.rejected` when the token endpoint refuses the service
    /// account, other errors (network, 5xx) when a later attempt may succeed.
    public func accessToken() async throws -> String {
        if let token = freshCachedToken() { return token }
        if let rejection, clock.now() < rejection.until { throw rejection.error }
        let id = nextWaiter
        nextWaiter += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if let token = freshCachedToken() {
                    continuation.resume(returning: token)
                } else {
                    waiters[id] = continuation
                    if refreshing == nil { refreshing = Task { await self.refresh() } }
                }
            }
        } onCancel: {
            Task { await self.abandon(id) }
        }
    }

    /// Forgets the cached token so the next caller fetches a new one (FCM answered 401).
    ///
    /// - Parameter rejected: the token FCM refused. When given, a token that has already been
    ///   replaced is left alone, so a burst of 401s for one revoked token makes one refresh,
    ///   not one per failed push.
    public func invalidate(_ rejected: String? = nil) {
        if let rejected, let cached, cached.value != rejected { return }
        cached = nil
    }

    private func freshCachedToken() -> String? {
        guard let cached, clock.now() < cached.refreshAt else { return nil }
        return cached.value
    }

    private func abandon(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    private func refresh() async {
        let result: Result<String, any Error>
        do {
            let token = try await fetch()
            cached = token
            rejection = nil
            result = .success(token.value)
        } catch let error as FCMAccessTokenError {
            if case .rejected = error { rejection = (error, clock.now().addingTimeInterval(Self.rejectionHold)) }
            result = .failure(error)
        } catch {
            result = .failure(error)
        }
        refreshing = nil
        let waiting = waiters
        waiters = [:]
        for continuation in waiting.values { continuation.resume(with: result) }
    }

    private func fetch() async throws -> CachedToken {
        let requestedAt = clock.now()
        let assertion = try await makeAssertion(at: requestedAt)
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(
            ByteBuffer(string: Self.formEncode([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)])))
        let response = try await http.execute(request, timeout: timeout)
        return try Self.parse(response, requestedAt: requestedAt)
    }

    func makeAssertion(at instant: Date) async throws -> String {
        let keys: JWTKeyCollection
        if let signer {
            keys = signer
        } else {
            keys = JWTKeyCollection()
            await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256)
            signer = keys
        }
        let issuedAt = Int(instant.timeIntervalSince1970.rounded(.down))
        let claims = AssertionClaims(
            iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: issuedAt, exp: issuedAt + Self.assertionLifetime)
        do {
            return try await keys.sign(claims, kid: account.privateKeyID.map { JWKIdentifier(string: $0) })
        } catch {
            throw FCMAccessTokenError.signingFailed
        }
    }

    /// Reads the token endpoint's answer.
    ///
    /// Why 400 and 401 are `rejected`: Google answers `invalid_grant` / `invalid_client` there
    /// for a deleted or wrong key, a disabled account or a far-off clock, none of which a retry
    /// fixes; everything else (429, 5xx, a garbled body) may pass and is thrown as retryable.
    static func parse(_ response: PushHTTP.Response, requestedAt: Date) throws -> CachedToken {
        let json = response.json
        switch response.status {
        case 200:
            guard let token = json?["access_token"]?.stringValue, !token.isEmpty else {
                throw FCMAccessTokenError.malformedResponse("no access_token")
            }
            if let type = json?["token_type"]?.stringValue, type.lowercased() != "bearer" {
                throw FCMAccessTokenError.malformedResponse("token_type \(type)")
            }
            // `expires_in` is only RECOMMENDED by RFC 6749; Google always sends it, and an hour
            // is what it would say.
            let lifetime = json?["expires_in"]?.doubleValue ?? json?["expires_in"]?.stringValue.flatMap(Double.init) ?? 3600
            guard lifetime > 0 else { throw FCMAccessTokenError.malformedResponse("expires_in \(lifetime)") }
            // A token too short-lived for the margin is kept for half its life instead.
            let margin = lifetime > 2 * refreshMargin ? refreshMargin : lifetime / 2
            return CachedToken(value: token, refreshAt: requestedAt.addingTimeInterval(lifetime - margin))
        case 400, 401:
            throw FCMAccessTokenError.rejected(
                status: response.status, error: json?["error"]?.stringValue, description: json?["error_description"]?.stringValue)
        default:
            throw FCMAccessTokenError.unavailable(status: response.status)
        }
    }

    static func formEncode(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return pairs.map { name, value in
            let encoded = value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
            return "\(name)=\(encoded)"
        }.joined(separator: "&")
    }
}

/// The JWT-bearer assertion's claims (Google's "OAuth 2.0 for server to server applications").
struct AssertionClaims: JWTPayload {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int
    var exp: Int

    /// Never verified here: Herald only signs assertions.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Why an access token could not be had.
public enum FCMAccessTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token endpoint refused the service account (400/401: `invalid_grant`, `invalid_client`).
    case rejected(status: Int, error: String?, description: String?)
    /// The token endpoint failed in a way that may pass (429, 5xx).
    case unavailable(status: Int)
    /// A 200 without a usable token.
    case malformedResponse(String)
    /// The assertion could not be signed.
    case signingFailed

    public var description: String {
        switch self {
        case .rejected(let status, let error, let description):
            "the OAuth2 token endpoint refused the FCM service account (HTTP \(status)\(error.map { ", \($0)" } ?? "")"
                + "\(description.map { ": \($0)" } ?? ""))"
        case .unavailable(let status): "the OAuth2 token endpoint answered HTTP \(status)"
        case .malformedResponse(let problem): "the OAuth2 token endpoint's answer is unusable: \(problem)"
        case .signingFailed: "the FCM OAuth2 assertion could not be signed"
        }
    }
}
