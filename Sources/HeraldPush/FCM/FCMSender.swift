import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOFoundationCompat

/// Sends pushes through FCM's HTTP v1 API (`projects/{id}/messages:send`) with a
/// service-account OAuth2 token.
public final class FCMSender: PushSender {
    public static let defaultBaseURL = "https://fcm.googleapis.com"

    /// What one FCM answer means for the worker.
    public enum Outcome: Sendable, Equatable {
        case result(PushResult)
        /// FCM refused the access token: get a new one and send again.
        case reauthenticate(FCMFailure)
    }

    let endpoint: String
    let tokens: FCMAccessTokenProvider
    private let http: PushHTTP
    private let clock: any HeraldClock
    private let timeout: Duration

    /// Reads and checks the service account now, so a bad file stops startup with a clear
    /// error instead of failing every push later.
    ///
    /// - Parameter requestTimeout: bound on each HTTP request (the worker bounds the whole
    ///   send as well).
    public convenience init(config: FCMConfig, http: PushHTTP, clock: any HeraldClock, requestTimeout: Duration = .seconds(10)) throws {
        try self.init(
            account: try ServiceAccount.load(file: config.serviceAccountFile), projectID: config.projectID, baseURL: config.baseURL,
            tokenURL: config.tokenURL, http: http, clock: clock, requestTimeout: requestTimeout)
    }

    /// - Parameters:
    ///   - projectID: overrides the account's `project_id`.
    ///   - baseURL: overrides `https://fcm.googleapis.com`.
    ///   - tokenURL: overrides the account's `token_uri`.
    public init(
        account: ServiceAccount, projectID: String? = nil, baseURL: String? = nil, tokenURL: String? = nil, http: PushHTTP,
        clock: any HeraldClock, requestTimeout: Duration = .seconds(10)
    ) throws {
        guard let project = (projectID ?? account.projectID)?.trimmingCharacters(in: .whitespaces), !project.isEmpty else {
            throw FCMConfigurationError("no project id: set project_id in the FCM config or in the service account file")
        }
        // Google project ids are lowercase letters, digits and hyphens; old Workspace projects
        // add a `domain.com:` prefix. Anything else would change the URL's path.
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.:_")
        guard project.unicodeScalars.allSatisfy(allowed.contains) else {
            throw FCMConfigurationError("project id \"\(project)\" has characters a Google project id cannot have")
        }
        var base = baseURL ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard ServiceAccount.isHTTPURL(base) else { throw FCMConfigurationError("base_url \"\(base)\" is not an http(s) URL") }
        if let tokenURL, !ServiceAccount.isHTTPURL(tokenURL) {
            throw FCMConfigurationError("token_url \"\(tokenURL)\" is not an http(s) URL")
        }
        endpoint = "\(base)/v1/projects/\(project)/messages:send"
        tokens = FCMAccessTokenProvider(account: account, tokenURL: tokenURL, http: http, clock: clock, timeout: requestTimeout)
        self.http = http
        self.clock = clock
        timeout = requestTimeout
    }

    /// Sends once; when FCM refuses the access token, once more with a fresh one.
    ///
    /// Why a refused token endpoint is `refused(.fcm(.authConfiguration))` rather than a thrown
    /// error: a thrown error is retried, and a bad or deleted key would then be retried for
    /// every push until the retry policy gives up, hiding the misconfiguration behind a long
    /// queue. Other token failures (network, 5xx) are thrown and retried.
    public func send(_ message: PushMessage) async throws -> PushResult {
        let body = try FCMMessageBuilder.encodedBody(for: message, now: clock.now())
        do {
            let token = try await tokens.accessToken()
            if case .result(let result) = try await post(body, token: token) { return result }
            await tokens.invalidate(token)
            switch try await post(body, token: try await tokens.accessToken()) {
            case .result(let result): return result
            // A fresh token refused again is the project's configuration (API disabled,
            // missing permission, APNs key not uploaded), not a stale token.
            case .reauthenticate(let failure): return .refused(.fcm(failure))
            }
        } catch let error as FCMAccessTokenError {
            if case .rejected = error { return .refused(.fcm(.authConfiguration)) }
            throw error
        }
    }

    private func post(_ body: Data, token: String) async throws -> Outcome {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(token)")
        request.headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await http.execute(request, timeout: timeout)
        return Self.classify(status: response.status, body: response.json, retryAfter: response.retryAfter(now: clock.now()))
    }

    /// Classifies one `messages:send` answer. The FCM `errorCode` in `error.details` decides
    /// first, then the canonical `error.status`, then the HTTP status.
    ///
    /// Choices beyond FCM's table:
    /// - `INVALID_ARGUMENT` whose message is about the registration token is `tokenGone`:
    ///   Google documents it as "the token is not a valid FCM registration token", which
    ///   will not change on a retry; any other `INVALID_ARGUMENT` is the payload's fault.
    /// - A 404 counts as `UNREGISTERED` only with Google's error body: a bare 404 (a wrong
    ///   `base_url`, a proxy) must not deactivate every device.
    /// - Unexpected 5xx are retried like `INTERNAL`; other unexpected 4xx fail.
    public static func classify(status: Int, body: JSONValue?, retryAfter: Duration?) -> Outcome {
        if status == 200 { return .result(.accepted(providerMessageID: body?["name"]?.stringValue)) }
        let error = body?["error"]
        let canonical = error?["status"]?.stringValue
        let message = error?["message"]?.stringValue ?? ""
        let named = (fcmErrorCode(error) ?? canonical).map(FCMFailure.init(code:))

        switch named {
        case let gone? where gone == .unregistered || gone == .senderIDMismatch:
            return .result(.tokenGone(.fcm(gone)))
        case let refused? where refused == .unauthenticated || refused == .thirdPartyAuthError:
            return .reauthenticate(refused)
        case let transient? where transient == .quotaExceeded || transient == .unavailable || transient == .internal:
            return .result(.retryLater(.fcm(transient), after: retryAfter))
        case .invalidArgument?:
            if message.lowercased().contains("registration token") {
                return .result(.tokenGone(.fcm(.invalidRegistrationToken)))
            }
            return .result(.refused(.fcm(.invalidArgument)))
        default:
            break
        }
        let failure = named ?? .http(status)
        switch status {
        case 401:
            return .reauthenticate(.unauthenticated)
        case 404 where canonical == "NOT_FOUND":
            return .result(.tokenGone(.fcm(.unregistered)))
        case 429, 500...599:
            return .result(.retryLater(.fcm(failure), after: retryAfter))
        case 400...499:
            return .result(.refused(.fcm(failure)))
        default:
            return .result(.retryLater(.fcm(.http(status)), after: retryAfter))
        }
    }

    /// The `errorCode` of the `google.firebase.fcm.v1.FcmError` detail, if any.
    static func fcmErrorCode(_ error: JSONValue?) -> String? {
        guard case .array(let details)? = error?["details"] else { return nil }
        for detail in details where detail["@type"]?.stringValue?.hasSuffix("google.firebase.fcm.v1.FcmError") == true {
            if let code = detail["errorCode"]?.stringValue { return code }
        }
        return nil
    }
}

/// An FCM setting that cannot work, found at startup.
public struct FCMConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = "FCM: " + description }
}
