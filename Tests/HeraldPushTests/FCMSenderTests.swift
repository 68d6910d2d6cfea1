import Foundation
import HeraldCore
import HeraldPush
import HeraldTestFixtures
import Synchronization
import Testing

/// Google stand-in on one mock server: the OAuth2 token endpoint (`/token`), which checks
/// each assertion's RS256 signature with the account's public key, and FCM's
/// `messages:send`, which answers from a script.
final class FakeGoogle: Sendable {
    struct State {
        var assertions: [String] = []
        var claims: [GoogleAssertionClaims] = []
        var problems: [String] = []
        var issued = 0
        var tokenAnswers: [MockPushServer.Response] = []
        var tokenDelay: Duration?
        /// When set, the token endpoint answers only once the test opens it.
        var tokenGate: Gate?
        var sendAnswers: [MockPushServer.Response] = []
        var sent = 0
    }

    let account: FCMTestAccount
    let state: Mutex<State>

    init(account: FCMTestAccount, state: State) {
        self.account = account
        self.state = Mutex(state)
    }

    func handle(_ request: MockPushServer.Request) async -> MockPushServer.Response {
        if request.path == "/token" { return await token(request) }
        if request.path.hasPrefix("/v1/projects/"), request.path.hasSuffix("/messages:send") { return send(request) }
        return MockPushServer.Response(status: 404, body: Data("Not Found".utf8))
    }

    private func token(_ request: MockPushServer.Request) async -> MockPushServer.Response {
        let fields = FCMTestAccount.formFields(request.body)
        var problems: [String] = []
        if request.method != "POST" { problems.append("method \(request.method)") }
        if request.header("content-type") != "application/x-www-form-urlencoded" { problems.append("content-type") }
        if fields["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer" { problems.append("grant_type") }
        let assertion = fields["assertion"] ?? ""
        let claims: GoogleAssertionClaims
        do {
            claims = try await account.verify(assertion)
        } catch {
            state.withLock { $0.problems.append("assertion: \(error)") }
            return .json(400, ["error": "invalid_grant", "error_description": "Invalid JWT Signature."])
        }
        let (scripted, delay, number, gate) = state.withLock { s in
            s.problems += problems
            s.assertions.append(assertion)
            s.claims.append(claims)
            s.issued += 1
            return (s.tokenAnswers.isEmpty ? nil : s.tokenAnswers.removeFirst(), s.tokenDelay, s.issued, s.tokenGate)
        }
        await gate?.wait()
        var response = scripted ?? .json(200, ["access_token": "ya29.token-\(number)", "expires_in": 3599, "token_type": "Bearer"])
        response.delay = delay
        return response
    }

    private func send(_ request: MockPushServer.Request) -> MockPushServer.Response {
        state.withLock { s in
            s.sent += 1
            if !s.sendAnswers.isEmpty { return s.sendAnswers.removeFirst() }
            return .json(200, ["name": "projects/p/messages/0:\(s.sent)"])
        }
    }
}

/// A sender wired to a `FakeGoogle`, with a manual clock.
struct FCMFixture {
    let google: FakeGoogle
    let server: MockPushServer
    let sender: FCMSender
    let clock: ManualClock

    var tokenRequests: [MockPushServer.Request] { server.requests.filter { $0.path == "/token" } }
    var sendRequests: [MockPushServer.Request] { server.requests.filter { $0.path.hasSuffix("/messages:send") } }
    var state: FakeGoogle.State { google.state.withLock { $0 } }

    static func with(
        projectID: String? = nil, useConfigTokenURL: Bool = false, script: (inout FakeGoogle.State) -> Void = { _ in },
        _ body: (FCMFixture) async throws -> Void
    ) async throws {
        let account = try FCMTestAccount()
        var initial = FakeGoogle.State()
        script(&initial)
        let google = FakeGoogle(account: account, state: initial)
        try await withTeardown { teardown in
            let server = try await MockPushServer.start { await google.handle($0) }
            teardown.add("fake Google") { try await server.stop() }
            let http = try PushHTTP(caFile: server.caFile)
            teardown.add("HTTP client") { try await http.client.shutdown() }
            let tokenURI = useConfigTokenURL ? "https://oauth2.googleapis.com/token" : server.baseURL + "/token"
            let file = try FCMTestAccount.write(account.json(tokenURI: tokenURI))
            let config = FCMConfig(
                serviceAccountFile: file, projectID: projectID, baseURL: server.baseURL,
                tokenURL: useConfigTokenURL ? server.baseURL + "/token" : nil, caFile: server.caFile)
            let clock = ManualClock()
            // Generous: the suite runs many TLS servers at once on two cores.
            let sender = try FCMSender(config: config, http: http, clock: clock, requestTimeout: Patience.limit)
            try await body(FCMFixture(google: google, server: server, sender: sender, clock: clock))
            #expect(google.state.withLock { $0.problems } == [])
        }
    }

    static func message(token: String = "fcm-device-token-1") -> PushMessage {
        PushMessage(
            deliveryID: "dlv_1", notificationID: "ntf_1", userID: "ann", deviceID: "dev_1", type: "driver_assigned", severity: .alert,
            provider: .fcm, platform: .android, token: token, title: "Alex is on the way", body: "Silver Camry, 4 min",
            data: ["job_id": "job_42", "eta_minutes": 4, "urgent": true, "notification_id": "ntf_1", "type": "driver_assigned"],
            category: "DRIVER_ASSIGNED", collapseKey: "job_42", interruptionLevel: .timeSensitive, badge: 3,
            expiresAt: 1_800_000_600_000)
    }
}

/// One FCM error answer and what it must become.
struct FCMErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let body: JSONValue?
    var headers: [(String, String)] = []
    let expected: FCMSender.Outcome

    var testDescription: String { name }

    var response: MockPushServer.Response {
        guard let body, let data = try? JSONEncoder().encode(body) else {
            return MockPushServer.Response(status: status, headers: headers, body: Data("Not Found".utf8))
        }
        return MockPushServer.Response(status: status, headers: headers + [("content-type", "application/json; charset=UTF-8")], body: data)
    }

    /// The error body FCM v1 sends: a google.rpc.Status with an FcmError detail.
    static func fcmError(_ code: Int, _ status: String, _ message: String, errorCode: String?, extra: [JSONValue] = []) -> JSONValue {
        var details = extra
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(errorCode)])
        }
        var error: [String: JSONValue] = ["code": .number(Double(code)), "message": .string(message), "status": .string(status)]
        if !details.isEmpty { error["details"] = .array(details) }
        return ["error": .object(error)]
    }

    /// An HTTP date 120 s after the fixture's manual clock starts.
    static let retryDate: String = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: ManualClock().now().addingTimeInterval(120))
    }()

    static let all: [FCMErrorCase] = [
        FCMErrorCase(
            name: "404 UNREGISTERED", status: 404,
            body: fcmError(404, "NOT_FOUND", "Requested entity was not found.", errorCode: "UNREGISTERED"),
            expected: .result(.tokenGone(.fcm(.unregistered)))),
        FCMErrorCase(
            name: "400 INVALID_ARGUMENT about the registration token", status: 400,
            body: fcmError(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT"),
            expected: .result(.tokenGone(.fcm(.invalidRegistrationToken)))),
        FCMErrorCase(
            name: "400 INVALID_ARGUMENT about the payload", status: 400,
            body: fcmError(
                400, "INVALID_ARGUMENT", "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \"4 weeks\"",
                errorCode: "INVALID_ARGUMENT",
                extra: [
                    [
                        "@type": "type.googleapis.com/google.rpc.BadRequest",
                        "fieldViolations": [["field": "message.android.ttl", "description": "Invalid value"]],
                    ]
                ]),
            expected: .result(.refused(.fcm(.invalidArgument)))),
        FCMErrorCase(
            name: "403 SENDER_ID_MISMATCH", status: 403,
            body: fcmError(403, "PERMISSION_DENIED", "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH"),
            expected: .result(.tokenGone(.fcm(.senderIDMismatch)))),
        FCMErrorCase(
            name: "429 QUOTA_EXCEEDED with Retry-After seconds", status: 429,
            body: fcmError(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Send requests'", errorCode: "QUOTA_EXCEEDED"),
            headers: [("retry-after", "30")], expected: .result(.retryLater(.fcm(.quotaExceeded), after: .seconds(30)))),
        FCMErrorCase(
            name: "503 UNAVAILABLE without Retry-After", status: 503,
            body: fcmError(503, "UNAVAILABLE", "The service is currently unavailable.", errorCode: "UNAVAILABLE"),
            expected: .result(.retryLater(.fcm(.unavailable), after: nil))),
        FCMErrorCase(
            name: "503 UNAVAILABLE with an HTTP-date Retry-After", status: 503,
            body: fcmError(503, "UNAVAILABLE", "The service is currently unavailable.", errorCode: "UNAVAILABLE"),
            headers: [("retry-after", retryDate)], expected: .result(.retryLater(.fcm(.unavailable), after: .seconds(120)))),
        FCMErrorCase(
            name: "500 INTERNAL", status: 500,
            body: fcmError(500, "INTERNAL", "Internal error encountered.", errorCode: "INTERNAL"),
            headers: [("retry-after", "5")], expected: .result(.retryLater(.fcm(.internal), after: .seconds(5)))),
        FCMErrorCase(
            name: "502 without a body", status: 502, body: nil, expected: .result(.retryLater(.fcm(.http(502)), after: nil))),
        FCMErrorCase(
            name: "403 PERMISSION_DENIED (service account lacks the role)", status: 403,
            body: fcmError(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource", errorCode: nil),
            expected: .result(.refused(.fcm(.other("PERMISSION_DENIED"))))),
        FCMErrorCase(
            name: "404 without Google's error body (wrong base_url)", status: 404, body: nil,
            expected: .result(.refused(.fcm(.http(404))))),
        FCMErrorCase(
            name: "413 without a body", status: 413, body: nil, expected: .result(.refused(.fcm(.http(413))))),
    ]

    static let auth: [FCMErrorCase] = [
        FCMErrorCase(
            name: "401 UNAUTHENTICATED", status: 401,
            body: fcmError(
                401, "UNAUTHENTICATED",
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
                errorCode: nil),
            expected: .reauthenticate(.unauthenticated)),
        FCMErrorCase(name: "401 without a body", status: 401, body: nil, expected: .reauthenticate(.unauthenticated)),
        FCMErrorCase(
            name: "401 THIRD_PARTY_AUTH_ERROR", status: 401,
            body: fcmError(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", errorCode: "THIRD_PARTY_AUTH_ERROR"),
            expected: .reauthenticate(.thirdPartyAuthError)),
    ]
}

@Suite struct FCMSenderTests {
    // MARK: Sending and the OAuth2 flow

    /// The token request carries a valid RS256 assertion; the send carries its token and the
    /// message; FCM's message name comes back as the provider id.
    @Test func sendsWithAValidAssertionAndBearerToken() async throws {
        try await FCMFixture.with { f in
            let result = try await f.sender.send(FCMFixture.message())
            #expect(result == .accepted(providerMessageID: "projects/p/messages/0:1"))

            let state = f.state
            #expect(f.tokenRequests.count == 1)
            let claims = try #require(state.claims.first)
            let start = Int(f.clock.now().timeIntervalSince1970)
            #expect(claims.iss == FCMTestAccount.clientEmail)
            #expect(claims.scope == "https://www.googleapis.com/auth/firebase.messaging")
            #expect(claims.aud == f.server.baseURL + "/token")
            #expect(claims.iat == start)
            #expect(claims.exp - claims.iat == 3600)
            let header = try #require(FCMTestAccount.header(of: state.assertions[0]))
            #expect(header["alg"] as? String == "RS256")
            #expect(header["kid"] as? String == FCMTestAccount.keyID)

            let send = try #require(f.sendRequests.first)
            #expect(send.method == "POST")
            #expect(send.path == "/v1/projects/p/messages:send")
            #expect(send.header("authorization") == "Bearer ya29.token-1")
            #expect(send.header("content-type")?.hasPrefix("application/json") == true)
            let body = try JSONDecoder().decode(JSONValue.self, from: send.body)
            #expect(body == FCMMessageBuilder.body(for: FCMFixture.message(), now: f.clock.now()))
            #expect(body["message"]?["token"] == "fcm-device-token-1")
            #expect(body["message"]?["notification"]?["title"] == "Alex is on the way")
            let data = try #require(body["message"]?["data"]?.objectValue)
            #expect(data.values.allSatisfy { $0.stringValue != nil })
            #expect(data["eta_minutes"] == "4")
            #expect(data["urgent"] == "true")
            #expect(data["notification_id"] == "ntf_1")
        }
    }

    /// One token serves many sends until 5 minutes before it expires, then is replaced.
    @Test func cachesTheTokenUntilFiveMinutesBeforeExpiry() async throws {
        try await FCMFixture.with { f in
            for _ in 0..<4 { _ = try await f.sender.send(FCMFixture.message()) }
            #expect(f.tokenRequests.count == 1)

            // expires_in 3599: refresh due at 3299 s.
            f.clock.advance(by: 3298)
            _ = try await f.sender.send(FCMFixture.message())
            #expect(f.tokenRequests.count == 1)
            #expect(f.sendRequests.last?.header("authorization") == "Bearer ya29.token-1")

            f.clock.advance(by: 2)
            let result = try await f.sender.send(FCMFixture.message())
            #expect(result == .accepted(providerMessageID: "projects/p/messages/0:6"))
            #expect(f.tokenRequests.count == 2)
            #expect(f.sendRequests.last?.header("authorization") == "Bearer ya29.token-2")
            #expect(f.state.claims.last?.iat == Int(f.clock.now().timeIntervalSince1970))
        }
    }

    /// An empty cache and 20 sends at once: one token request, shared by all.
    @Test func concurrentSendsShareOneTokenRequest() async throws {
        try await FCMFixture.with(script: { $0.tokenDelay = .milliseconds(300) }) { f in
            let sender = f.sender
            let results = try await withThrowingTaskGroup(of: PushResult.self) { group in
                for index in 0..<20 { group.addTask { try await sender.send(FCMFixture.message(token: "device-\(index)")) } }
                return try await group.reduce(into: [PushResult]()) { $0.append($1) }
            }
            #expect(results.count == 20)
            #expect(results.allSatisfy { if case .accepted = $0 { true } else { false } })
            #expect(f.tokenRequests.count == 1)
            #expect(f.sendRequests.count == 20)
            #expect(f.sendRequests.allSatisfy { $0.header("authorization") == "Bearer ya29.token-1" })
        }
    }

    /// A send whose deadline passes while the token is being fetched gives up, without
    /// cancelling the refresh another send is waiting for. (How fast it gives up is not timed
    /// here: timings belong in benchmarks, and this suite shares two cores.)
    @Test(.timeLimit(.minutes(10)))
    func aCancelledWaiterDoesNotCancelTheSharedRefresh() async throws {
        // The token is answered only once the impatient send has given up (not after a fixed
        // second, which a starved 150 ms timer could outlast on a loaded machine).
        let gate = Gate()
        try await FCMFixture.with(script: { $0.tokenGate = gate }) { f in
            defer { gate.open() }  // on every path, so the mock's handler ends before it stops
            let sender = f.sender
            async let patient = sender.send(FCMFixture.message())
            try await CancellableSleep.sleep(for: .milliseconds(50))
            await #expect(throws: DeadlineExceeded.self) {
                _ = try await withDeadline(.milliseconds(150)) { try await sender.send(FCMFixture.message()) }
            }
            gate.open()
            #expect(try await patient == .accepted(providerMessageID: "projects/p/messages/0:1"))
            #expect(f.tokenRequests.count == 1)
        }
    }

    /// FCM refuses the token (revoked): one fresh token, one more send, delivered.
    @Test func unauthenticatedRefreshesTheTokenAndSendsAgain() async throws {
        try await FCMFixture.with(script: { $0.sendAnswers = [FCMErrorCase.auth[0].response] }) { f in
            let result = try await f.sender.send(FCMFixture.message())
            #expect(result == .accepted(providerMessageID: "projects/p/messages/0:2"))
            #expect(f.tokenRequests.count == 2)
            #expect(f.sendRequests.map { $0.header("authorization") } == ["Bearer ya29.token-1", "Bearer ya29.token-2"])
        }
    }

    /// Refused again with a fresh token: the project's configuration, not a stale token.
    @Test func aSecondAuthErrorFailsWithoutLooping() async throws {
        let answer = FCMErrorCase.auth[2].response
        try await FCMFixture.with(script: { $0.sendAnswers = [answer, answer, answer] }) { f in
            let result = try await f.sender.send(FCMFixture.message())
            #expect(result == .refused(.fcm(.thirdPartyAuthError)))
            #expect(f.tokenRequests.count == 2)
            #expect(f.sendRequests.count == 2)
        }
    }

    /// Every FCM error shape, as the mock sends it, ends as the classification says.
    @Test(arguments: FCMErrorCase.all)
    func classifiesProviderErrors(_ errorCase: FCMErrorCase) async throws {
        try await FCMFixture.with(script: { $0.sendAnswers = [errorCase.response] }) { f in
            let result = try await f.sender.send(FCMFixture.message())
            #expect(.result(result) == errorCase.expected)
            #expect(f.sendRequests.count == 1)
        }
    }

    // MARK: The token endpoint

    /// A refused service account (bad key) fails the push instead of retrying it forever, and
    /// the refusal is remembered briefly so a backlog does not hammer the token endpoint.
    @Test(arguments: [400, 401])
    func aRefusedServiceAccountFailsAsAuthConfiguration(_ status: Int) async throws {
        let refusal = MockPushServer.Response.json(
            status, ["error": status == 400 ? "invalid_grant" : "invalid_client", "error_description": "Invalid JWT Signature."])
        try await FCMFixture.with(script: { $0.tokenAnswers = [refusal] }) { (f) async throws in
            #expect(try await f.sender.send(FCMFixture.message()) == .refused(.fcm(.authConfiguration)))
            #expect(try await f.sender.send(FCMFixture.message()) == .refused(.fcm(.authConfiguration)))
            #expect(f.tokenRequests.count == 1)
            #expect(f.sendRequests.isEmpty)

            f.clock.advance(by: 61)
            #expect(try await f.sender.send(FCMFixture.message()) == .accepted(providerMessageID: "projects/p/messages/0:1"))
            #expect(f.tokenRequests.count == 2)
        }
    }

    /// A token endpoint that is down throws (the worker retries) and is asked again next time.
    @Test func anUnavailableTokenEndpointThrows() async throws {
        try await FCMFixture.with(script: { $0.tokenAnswers = [.json(503, ["error": "backend_error"])] }) { (f) async throws in
            await #expect(throws: FCMAccessTokenError.unavailable(status: 503)) {
                _ = try await f.sender.send(FCMFixture.message())
            }
            #expect(try await f.sender.send(FCMFixture.message()) == .accepted(providerMessageID: "projects/p/messages/0:1"))
            #expect(f.tokenRequests.count == 2)
        }
    }

    /// `token_url` in the config redirects the exchange, but the assertion's audience stays the
    /// file's `token_uri` (what Google checks); `project_id` in the config wins over the file's.
    @Test func configOverridesTokenURLAndProject() async throws {
        try await FCMFixture.with(projectID: "other-project", useConfigTokenURL: true) { f in
            _ = try await f.sender.send(FCMFixture.message())
            #expect(f.tokenRequests.count == 1)
            #expect(f.state.claims.first?.aud == "https://oauth2.googleapis.com/token")
            #expect(f.sendRequests.first?.path == "/v1/projects/other-project/messages:send")
        }
    }

    // MARK: Classification (pure)

    @Test(arguments: FCMErrorCase.all + FCMErrorCase.auth)
    func classifyIsPure(_ errorCase: FCMErrorCase) throws {
        let body = try errorCase.body.map { try JSONEncoder().encode($0) } ?? Data("Not Found".utf8)
        let response = PushHTTP.Response(status: errorCase.status, headers: .init(errorCase.headers), body: body)
        let outcome = FCMSender.classify(
            status: response.status, body: response.json, retryAfter: response.retryAfter(now: ManualClock().now()))
        #expect(outcome == errorCase.expected)
    }

    @Test func classifyDelivered() {
        #expect(
            FCMSender.classify(status: 200, body: ["name": "projects/p/messages/0:17"], retryAfter: nil)
                == .result(.accepted(providerMessageID: "projects/p/messages/0:17")))
        #expect(FCMSender.classify(status: 200, body: nil, retryAfter: nil) == .result(.accepted(providerMessageID: nil)))
    }

    /// The FCM errorCode decides even under an unexpected HTTP status.
    @Test func classifyPrefersTheFCMErrorCode() {
        let body = FCMErrorCase.fcmError(400, "INVALID_ARGUMENT", "Requested entity was not found.", errorCode: "UNREGISTERED")
        #expect(FCMSender.classify(status: 400, body: body, retryAfter: nil) == .result(.tokenGone(.fcm(.unregistered))))
    }

    // MARK: Configuration errors

    @Test func aMissingFileIsAClearError() throws {
        let path = "/nonexistent/\(UUID().uuidString).json"
        let error = try #require(throws: ServiceAccountError.self) {
            _ = try FCMSender(config: FCMConfig(serviceAccountFile: path), http: try Self.http, clock: ManualClock())
        }
        #expect(error.description.contains(path))
        #expect(error.description.contains("cannot be read"))
    }

    @Test func aFileThatIsNotJSONIsAClearError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-\(UUID().uuidString).json").path
        try Data("-----BEGIN PRIVATE KEY-----".utf8).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: ServiceAccountError.self) {
            _ = try FCMSender(config: FCMConfig(serviceAccountFile: path), http: try Self.http, clock: ManualClock())
        }
        #expect(error.field == nil)
        #expect(error.description.contains("not a JSON object"))
    }

    /// Each bad field is named; the key itself never appears in the message.
    @Test(
        arguments: [
            ("type", "authorized_user", "must be \"service_account\""),
            ("type", nil, "is missing"),
            ("client_email", nil, "is missing"),
            ("client_email", "", "is empty"),
            ("client_email", "not-an-email", "not an email address"),
            ("private_key", nil, "is missing"),
            ("private_key", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "not a PEM private key"),
            ("private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "not a usable RSA private key"),
            ("token_uri", "oauth2.googleapis.com/token", "not an http(s) URL"),
        ] as [(String, String?, String)])
    func invalidFieldsAreNamed(_ field: String, _ value: String?, _ problem: String) throws {
        let account = try FCMTestAccount()
        var object = account.json(tokenURI: "https://oauth2.googleapis.com/token")
        object[field] = value
        let path = try FCMTestAccount.write(object)
        let error = try #require(throws: ServiceAccountError.self) {
            _ = try FCMSender(config: FCMConfig(serviceAccountFile: path), http: try Self.http, clock: ManualClock())
        }
        #expect(error.field == field)
        #expect(error.description.contains(problem))
        #expect(!error.description.contains("BEGIN"))
    }

    @Test func aNumberWhereAStringBelongsIsNamed() throws {
        var object = try FCMTestAccount().json(tokenURI: "https://oauth2.googleapis.com/token")
        object["project_id"] = 42
        let error = try #require(throws: ServiceAccountError.self) { _ = try ServiceAccount.load(file: try FCMTestAccount.write(object)) }
        #expect(error.description == "FCM service account \(error.source): \"project_id\" must be a string, got number")
    }

    /// Keys pasted with literal `\n` (environment variables, YAML) still load.
    @Test func aKeyWithEscapedNewlinesLoads() throws {
        let account = try FCMTestAccount()
        var object = account.json(tokenURI: "https://oauth2.googleapis.com/token")
        object["private_key"] = account.privateKeyPEM.replacingOccurrences(of: "\n", with: "\\n")
        let loaded = try ServiceAccount.load(file: try FCMTestAccount.write(object))
        #expect(loaded.clientEmail == FCMTestAccount.clientEmail)
        #expect(loaded.projectID == "p")
        #expect(loaded.privateKeyID == FCMTestAccount.keyID)
    }

    @Test func aMissingProjectIsAClearError() throws {
        let account = try FCMTestAccount()
        let path = try FCMTestAccount.write(account.json(tokenURI: "https://oauth2.googleapis.com/token", projectID: nil))
        let error = try #require(throws: FCMConfigurationError.self) {
            _ = try FCMSender(config: FCMConfig(serviceAccountFile: path), http: try Self.http, clock: ManualClock())
        }
        #expect(error.description.contains("project_id"))
        // The config can supply it.
        _ = try FCMSender(config: FCMConfig(serviceAccountFile: path, projectID: "p"), http: try Self.http, clock: ManualClock())
    }

    @Test(arguments: [("base_url", "fcm.googleapis.com"), ("token_url", "ftp://example.com/token"), ("project_id", "p/../x")])
    func badConfigValuesAreClearErrors(_ field: String, _ value: String) throws {
        let account = try FCMTestAccount()
        let path = try FCMTestAccount.write(account.json(tokenURI: "https://oauth2.googleapis.com/token"))
        let config = FCMConfig(
            serviceAccountFile: path, projectID: field == "project_id" ? value : nil, baseURL: field == "base_url" ? value : nil,
            tokenURL: field == "token_url" ? value : nil)
        let error = try #require(throws: FCMConfigurationError.self) {
            _ = try FCMSender(config: config, http: try Self.http, clock: ManualClock())
        }
        #expect(error.description.contains(value))
    }

    /// Never used to send: construction only needs a client to hold. Shared and never shut
    /// down, because async-http-client insists on a shutdown before a client is released.
    static let sharedHTTP = Result { try PushHTTP() }
    static var http: PushHTTP { get throws { try sharedHTTP.get() } }
}
