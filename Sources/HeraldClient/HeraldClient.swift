import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Herald for an app: typed REST calls that read the envelope and its error codes, device
/// registration, the inbox and the realtime connection, with one token provider for all.
///
/// Why its own product with no server dependency: an iOS app links only this (Foundation and
/// URLSession; on Linux the WebSocket goes through SwiftNIO, which Foundation lacks there).
public final class HeraldClient: Sendable {
    public let baseURL: URL
    let tokens: any HeraldTokenProvider
    let session: URLSession

    public init(baseURL: URL, tokenProvider: any HeraldTokenProvider, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.tokens = tokenProvider
        self.session = session
    }

    // MARK: Calls

    /// The signed-in user.
    public func me() async throws -> HeraldUser {
        try await send("GET", "/api/v1/me")
    }

    /// Registers this device's APNs token (the `Data` from
    /// `didRegisterForRemoteNotificationsWithDeviceToken`) for the signed-in user. `deviceID`
    /// names the installation (`identifierForVendor`): a new token for it replaces the old one.
    @discardableResult
    public func registerAPNs(deviceToken: Data, deviceID: String? = nil, appVersion: String? = nil, osVersion: String? = nil, locale: String? = nil)
        async throws -> PushDevice
    {
        let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
        return try await send(
            "POST", "/api/v1/push/register",
            body: DeviceRegistration(
                token: hex, provider: "apns", platform: "ios", deviceId: deviceID, appVersion: appVersion, osVersion: osVersion, locale: locale))
    }

    /// Stops pushes to `token` (sign-out).
    @discardableResult
    public func unregisterDevice(token: String) async throws -> PushDevice {
        try await send("DELETE", "/api/v1/push/unregister", body: ["token": token])
    }

    /// A page of the inbox, newest first.
    public func inbox(offset: Int = 0, limit: Int = 20, unreadOnly: Bool = false) async throws -> InboxPage {
        try await send(
            "GET", "/api/v1/notifications",
            query: [
                URLQueryItem(name: "offset", value: "\(offset)"), URLQueryItem(name: "limit", value: "\(limit)"),
                URLQueryItem(name: "unread_only", value: unreadOnly ? "true" : "false"),
            ])
    }

    public func unreadCount() async throws -> Int {
        let answer: [String: Int] = try await send("GET", "/api/v1/notifications/unread-count")
        return answer["count"] ?? 0
    }

    /// Marks one notification read; the user's other devices hear of it.
    @discardableResult
    public func markRead(_ notificationID: String) async throws -> InboxNotification {
        try await send("POST", "/api/v1/notifications/\(Self.pathSegment(notificationID))/read")
    }

    public func markRead(_ notificationIDs: [String]) async throws {
        let _: HeraldJSON = try await send("POST", "/api/v1/notifications/bulk-read", body: ["notification_ids": notificationIDs])
    }

    /// The realtime connection: run it (`await connection.run()`, in the app's `.task`), then
    /// read `events`.
    public func realtime(cursors: any EventCursorStore = SavedEventCursors(), backoff: Backoff = Backoff()) -> RealtimeConnection {
        RealtimeConnection(client: self, cursors: cursors, backoff: backoff, transport: DefaultRealtimeTransport())
    }

    // MARK: The envelope

    /// Sends a request and decodes the envelope's `data` as `Response`; asks the token
    /// provider to refresh once when the server answers 401.
    public func send<Response: Decodable & Sendable>(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (any Encodable & Sendable)? = nil
    ) async throws -> Response {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = try HeraldJSON.encoder.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        var (data, response) = try await perform(request, token: try await tokens.token(forceRefresh: false))
        if response.statusCode == 401 {
            (data, response) = try await perform(request, token: try await tokens.token(forceRefresh: true))
        }
        return try Self.decode(Response.self, data: data, response: response)
    }

    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.percentEncodedPath = components.percentEncodedPath.trimmingSuffix("/") + path
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }

    private func perform(_ request: URLRequest, token: String) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw HeraldClientError.transport(error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else { throw HeraldClientError.transport("not an HTTP answer") }
        return (data, http)
    }

    private struct Success<T: Decodable>: Decodable { let data: T }
    private struct Failure: Decodable {
        struct Body: Decodable {
            let code: String
            let message: String
            let details: Details?
        }
        struct Details: Decodable { let fields: [HeraldClientError.FieldProblem]? }
        let error: Body
    }

    static func decode<T: Decodable>(_ type: T.Type, data: Data, response: HTTPURLResponse) throws -> T {
        let decoder = HeraldJSON.decoder
        if (200..<300).contains(response.statusCode) {
            do {
                return try decoder.decode(Success<T>.self, from: data).data
            } catch {
                throw HeraldClientError.unexpectedResponse(status: response.statusCode, body: String(decoding: data.prefix(500), as: UTF8.self))
            }
        }
        guard let failure = try? decoder.decode(Failure.self, from: data) else {
            throw HeraldClientError.unexpectedResponse(status: response.statusCode, body: String(decoding: data.prefix(500), as: UTF8.self))
        }
        let retryAfter = (response.value(forHTTPHeaderField: "Retry-After")).flatMap { Int($0) }
        throw HeraldClientError.api(
            status: response.statusCode, code: failure.error.code, message: failure.error.message,
            fields: failure.error.details?.fields ?? [], retryAfterSeconds: retryAfter)
    }

    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? text
    }
}

struct DeviceRegistration: Encodable, Sendable {
    let token: String
    let provider: String
    let platform: String
    let deviceId: String?
    let appVersion: String?
    let osVersion: String?
    let locale: String?

    enum CodingKeys: String, CodingKey {
        case token, provider, platform, locale
        case deviceId = "device_id"
        case appVersion = "app_version"
        case osVersion = "os_version"
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
