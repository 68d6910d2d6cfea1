import Crypto
import Foundation
import HeraldCore
import HeraldTestFixtures
import NIOHTTP1
import Testing

@testable import HeraldPush

/// The Web Push sender against a mock push service (TLS, HTTP/2) that decrypts what it gets
/// with the subscription's private key, plus the pure parts: headers, payload, classification.
@Suite struct WebPushSenderTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func message(
        endpoint: String, subscription: WebPushTestSubscription, severity: Severity = .warning, collapseKey: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, expiresAt: Int64? = nil, body: String? = "Your driver is 2 minutes away",
        data: JSONValue = ["trip_id": "trip_42", "notification_id": "ntf_1", "type": "trip.arriving"]
    ) -> PushMessage {
        PushMessage(
            deliveryID: "dlv_1", notificationID: "ntf_1", userID: "usr_1", deviceID: "dev_1", type: "trip.arriving", severity: severity,
            provider: .webpush, platform: .web, token: endpoint, webpushP256dh: subscription.p256dh, webpushAuth: subscription.auth,
            title: "Driver arriving", body: body, data: data, collapseKey: collapseKey, interruptionLevel: interruptionLevel, badge: 3,
            expiresAt: expiresAt)
    }

    /// The mock: `/push/<status>` answers that status; `/push/ok` answers 201 only when the body
    /// decrypts with the subscription's key (400 otherwise), as a browser would need it to.
    static func startServer(subscription: WebPushTestSubscription, teardown: Teardown) async throws -> MockPushServer {
        let server = try await MockPushServer.start { request in
            let name = request.path.split(separator: "/").last.map(String.init) ?? ""
            switch name {
            case "ok":
                guard (try? WebPushTestDecryptor.decrypt(request.body, subscription: subscription)) != nil else {
                    return .json(400, ["message": "could not decrypt"])
                }
                return MockPushServer.Response(status: 201, headers: [("location", "https://push.example/m/abc123")])
            case "429": return .json(429, ["message": "slow down"], headers: [("retry-after", "30")])
            case "403": return .json(403, ["code": 403, "errno": 109, "error": "Forbidden", "message": "VAPID key mismatch"])
            default: return MockPushServer.Response(status: Int(name) ?? 500, body: Data("status \(name)".utf8))
            }
        }
        teardown.add("push service") { try await server.stop() }
        return server
    }

    static func makeSender(
        caFile: String, clock: any HeraldClock, requestTimeout: Duration = Patience.limit, teardown: Teardown
    ) throws -> (WebPushSender, PushHTTP, VAPIDKey) {
        let key = VAPIDKey.generate()
        let config = WebPushConfig(vapidPrivateKey: key.privateKeyBase64URL, subject: "mailto:ops@example.com", caFile: caFile)
        let http = try PushHTTP(caFile: config.caFile)
        teardown.add("HTTP client") { try await http.client.shutdown() }
        return (try WebPushSender(config: config, http: http, clock: clock, requestTimeout: requestTimeout), http, key)
    }

    @Test func deliversAnEncryptedPushWithTheRFC8030Headers() async throws {
        try await withTeardown { teardown in
            let subscription = WebPushTestSubscription()
            let server = try await Self.startServer(subscription: subscription, teardown: teardown)
            let clock = ManualClock(Self.start)
            let (sender, _, key) = try Self.makeSender(caFile: server.caFile, clock: clock, teardown: teardown)
            #expect(sender.vapidPublicKey == key.publicKeyBase64URL)
            let endpoint = server.baseURL + "/push/ok"
            let message = Self.message(
                endpoint: endpoint, subscription: subscription, severity: .alert, collapseKey: "trip_42",
                expiresAt: Self.start.epochMilliseconds + 60_500)
            let result = try await sender.send(message)
            #expect(result == .accepted(providerMessageID: "https://push.example/m/abc123"))

            let request = try #require(server.requests.last)
            #expect(request.method == "POST")
            #expect(request.path == "/push/ok")
            #expect(request.header("content-encoding") == "aes128gcm")
            #expect(request.header("content-type") == "application/octet-stream")
            #expect(request.header("ttl") == "61")
            #expect(request.header("urgency") == "high")
            #expect(request.header("topic") == "trip_42")

            let (token, k) = try VAPIDTests.parseAuthorization(try #require(request.header("authorization")))
            #expect(k == sender.vapidPublicKey)
            let parts = try VAPIDTests.parts(token)
            #expect(parts.claims["aud"] as? String == server.baseURL)
            #expect(parts.claims["sub"] as? String == "mailto:ops@example.com")
            #expect(parts.claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
            let publicKey = try P256.Signing.PublicKey(x963Representation: WebPushTestBase64.decode(k))
            #expect(publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: parts.signature), for: Data(parts.signingInput.utf8)))

            // What the service worker gets from event.data.json().
            let plaintext = try WebPushTestDecryptor.decrypt(request.body, subscription: subscription)
            let json = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
            let notification = try #require(json["notification"] as? [String: Any])
            #expect(notification["title"] as? String == "Driver arriving")
            #expect(notification["body"] as? String == "Your driver is 2 minutes away")
            #expect(notification["tag"] as? String == "trip_42")
            #expect(notification["badge"] == nil)
            let data = try #require(json["data"] as? [String: Any])
            #expect(data["trip_id"] as? String == "trip_42")
            #expect(json["notification_id"] as? String == "ntf_1")
            #expect(json["type"] as? String == "trip.arriving")
            #expect(json["badge"] as? Int == 3)
            #expect(json["truncated"] == nil)
        }
    }

    /// Defaults: the longest TTL, `normal` urgency, the notification id's Topic (a copy re-sent
    /// after a crash replaces an undelivered first one); a second push reuses the VAPID token.
    @Test func sendsDefaultsAndReusesTheVAPIDToken() async throws {
        try await withTeardown { teardown in
            let subscription = WebPushTestSubscription()
            let server = try await Self.startServer(subscription: subscription, teardown: teardown)
            let clock = ManualClock(Self.start)
            let (sender, _, _) = try Self.makeSender(caFile: server.caFile, clock: clock, teardown: teardown)
            let message = Self.message(endpoint: server.baseURL + "/push/ok", subscription: subscription)
            #expect(try await sender.send(message) == .accepted(providerMessageID: "https://push.example/m/abc123"))
            clock.advance(by: 600)
            #expect(try await sender.send(message) == .accepted(providerMessageID: "https://push.example/m/abc123"))
            let requests = server.requests
            #expect(requests.count == 2)
            #expect(
                requests.allSatisfy {
                    $0.header("ttl") == "2419200" && $0.header("urgency") == "normal"
                        && $0.header("topic") == WebPushSender.topic(collapseKey: message.notificationID)
                })
            #expect(requests[0].header("authorization") == requests[1].header("authorization"))
            // Each push is sealed anew all the same.
            #expect(requests[0].body != requests[1].body)
        }
    }

    @Test func classifiesThePushServicesAnswers() async throws {
        try await withTeardown { teardown in
            let subscription = WebPushTestSubscription()
            let server = try await Self.startServer(subscription: subscription, teardown: teardown)
            let (sender, _, _) = try Self.makeSender(caFile: server.caFile, clock: ManualClock(Self.start), teardown: teardown)
            func send(_ status: String) async throws -> PushResult {
                try await sender.send(Self.message(endpoint: server.baseURL + "/push/\(status)", subscription: subscription))
            }
            #expect(try await send("404") == .tokenGone(.webPush(.notFound)))
            #expect(try await send("410") == .tokenGone(.webPush(.gone)))
            #expect(try await send("413") == .refused(.webPush(.payloadTooLarge)))
            #expect(try await send("429") == .retryLater(.webPush(.tooManyRequests), after: .seconds(30)))
            #expect(try await send("503") == .retryLater(.webPush(.serverError(503)), after: nil))
            #expect(try await send("400") == .refused(.webPush(.refused(status: 400, detail: "status 400"))))
            #expect(try await send("403") == .refused(.webPush(.refused(status: 403, detail: "VAPID key mismatch"))))
        }
    }

    /// A refused connection is thrown for the worker to retry, not classified.
    @Test func throwsWhenThePushServiceCannotBeReached() async throws {
        try await withTeardown { teardown in
            let subscription = WebPushTestSubscription()
            // Started and stopped at once: a port nobody listens on.
            let server = try await MockPushServer.start { _ in .init(status: 201) }
            let caFile = server.caFile
            let endpoint = server.baseURL + "/push/ok"
            try await server.stop()
            // async-http-client keeps retrying a refused connection until the deadline.
            let (sender, _, _) = try Self.makeSender(caFile: caFile, clock: ManualClock(Self.start), requestTimeout: .seconds(1), teardown: teardown)
            await #expect(throws: (any Error).self) { try await sender.send(Self.message(endpoint: endpoint, subscription: subscription)) }
        }
    }

    /// Nothing is sent for a subscription that can never decrypt: the message is dead-lettered.
    @Test func failsWithoutSendingForUnusableSubscriptions() async throws {
        try await withTeardown { teardown in
            let caFile = try await TestCertificate.make().certificate
            let (sender, _, _) = try Self.makeSender(caFile: caFile, clock: ManualClock(Self.start), teardown: teardown)
            let subscription = WebPushTestSubscription()
            var message = Self.message(endpoint: "https://127.0.0.1:9/push/ok", subscription: subscription)
            message.webpushAuth = nil
            #expect(try await sender.send(message) == .refused(.webPush(.missingSubscriptionKeys)))
            message.webpushAuth = "not base64!"
            #expect(try await sender.send(message) == .refused(.webPush(.invalidSubscriptionKeys)))
            message.webpushAuth = WebPushTestBase64.encode(Data(count: 8))
            #expect(try await sender.send(message) == .refused(.webPush(.invalidSubscription("the subscription's auth secret must be 16 bytes, got 8"))))
            message.webpushAuth = subscription.auth
            message.webpushP256dh = WebPushTestBase64.encode(Data(count: 64))
            #expect(
                try await sender.send(message)
                    == .refused(.webPush(.invalidSubscription("the subscription's p256dh key is unusable: expected 65 bytes, got 64"))))
            message.webpushP256dh = subscription.p256dh
            message.token = "not an endpoint"
            #expect(
                try await sender.send(message)
                    == .refused(.webPush(.invalidSubscription("the push endpoint \"not an endpoint\" is not an http(s) URL with a host"))))
        }
    }

    @Test func refusesABadConfigurationAtStartup() throws {
        let http = try PushHTTP()
        defer { try? http.client.syncShutdown() }
        let key = VAPIDKey.generate().privateKeyBase64URL
        #expect(throws: WebPushError.invalidSubject("ops@example.com")) {
            try WebPushSender(config: WebPushConfig(vapidPrivateKey: key, subject: "ops@example.com"), http: http, clock: SystemClock())
        }
        #expect(throws: WebPushError.self) {
            try WebPushSender(config: WebPushConfig(vapidPrivateKey: "short", subject: "mailto:ops@example.com"), http: http, clock: SystemClock())
        }
    }

    // MARK: - Pure parts

    @Test func classifiesEveryStatusFamily() {
        let now = Self.start
        func classify(_ status: Int, _ headers: HTTPHeaders = [:], _ body: String = "") -> PushResult {
            WebPushSender.classify(PushHTTP.Response(status: status, headers: headers, body: Data(body.utf8)), now: now)
        }
        #expect(classify(201, ["Location": "https://fcm.googleapis.com/0:123"]) == .accepted(providerMessageID: "https://fcm.googleapis.com/0:123"))
        #expect(classify(200) == .accepted(providerMessageID: nil))
        #expect(classify(202, ["location": " "]) == .accepted(providerMessageID: nil))
        #expect(classify(404) == .tokenGone(.webPush(.notFound)))
        #expect(classify(410, [:], #"{"errno":106}"#) == .tokenGone(.webPush(.gone)))
        #expect(classify(413) == .refused(.webPush(.payloadTooLarge)))
        #expect(classify(429, ["Retry-After": "30"]) == .retryLater(.webPush(.tooManyRequests), after: .seconds(30)))
        #expect(classify(429) == .retryLater(.webPush(.tooManyRequests), after: nil))
        #expect(classify(500) == .retryLater(.webPush(.serverError(500)), after: nil))
        #expect(classify(502, ["retry-after": "Fri, 15 Jan 2027 08:00:10 GMT"]) == .retryLater(.webPush(.serverError(502)), after: .seconds(10)))
        #expect(classify(408) == .retryLater(.webPush(.requestTimeout), after: nil))
        #expect(classify(400) == .refused(.webPush(.refused(status: 400, detail: nil))))
        #expect(classify(401, [:], #"{"reason":"BadJwtToken"}"#) == .refused(.webPush(.refused(status: 401, detail: "BadJwtToken"))))
        #expect(classify(403, [:], "the key\nis wrong") == .refused(.webPush(.refused(status: 403, detail: "the key is wrong"))))
        #expect(classify(302) == .refused(.webPush(.refused(status: 302, detail: nil))))
        if case .refused(let failure) = classify(400, [:], String(repeating: "x", count: 1000)) {
            #expect(failure.description.count < 230)
        } else {
            Issue.record("400 must fail")
        }
    }

    @Test func ttlCountsDownToTheExpiry() {
        let now = Self.start
        let ms = now.epochMilliseconds
        #expect(WebPushSender.ttl(expiresAt: nil, now: now) == 2_419_200)
        #expect(WebPushSender.ttl(expiresAt: ms + 60_000, now: now) == 60)
        #expect(WebPushSender.ttl(expiresAt: ms + 1, now: now) == 1)
        #expect(WebPushSender.ttl(expiresAt: ms, now: now) == 0)
        #expect(WebPushSender.ttl(expiresAt: ms - 5000, now: now) == 0)
        #expect(WebPushSender.ttl(expiresAt: ms + 90 * 86_400_000, now: now) == 2_419_200)
    }

    @Test func urgencyFollowsSeverityAndInterruptionLevel() {
        #expect(WebPushSender.urgency(severity: .alert, interruptionLevel: nil) == "high")
        #expect(WebPushSender.urgency(severity: .info, interruptionLevel: .timeSensitive) == "high")
        #expect(WebPushSender.urgency(severity: .warning, interruptionLevel: .critical) == "high")
        #expect(WebPushSender.urgency(severity: .warning, interruptionLevel: nil) == "normal")
        #expect(WebPushSender.urgency(severity: .info, interruptionLevel: .active) == "normal")
        #expect(WebPushSender.urgency(severity: .info, interruptionLevel: .passive) == "low")
    }

    @Test func topicIsTheCollapseKeyOrAStableDigestOfIt() {
        #expect(WebPushSender.topic(collapseKey: "trip_42") == "trip_42")
        #expect(WebPushSender.topic(collapseKey: String(repeating: "a", count: 32)) == String(repeating: "a", count: 32))
        #expect(WebPushSender.topic(collapseKey: "") == nil)
        for key in ["trip:42", String(repeating: "a", count: 33), "trip 42", "été"] {
            let topic = WebPushSender.topic(collapseKey: key)
            let expected = WebPushTestBase64.encode(Data(SHA256.hash(data: Data(key.utf8)).prefix(24)))
            #expect(topic == expected)
            #expect(topic?.count == 32)
            #expect(topic?.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } == true)
        }
        #expect(WebPushSender.topic(collapseKey: "trip:42") != WebPushSender.topic(collapseKey: "trip:43"))
    }

    @Test func payloadOmitsAbsentFieldsRatherThanSendingNull() throws {
        let message = Self.message(endpoint: "https://push.example/x", subscription: WebPushTestSubscription(), body: nil)
        let json = try #require(try JSONSerialization.jsonObject(with: WebPushSender.plaintext(for: message)) as? [String: Any])
        let notification = try #require(json["notification"] as? [String: Any])
        #expect(Set(notification.keys) == ["title", "tag"])
        #expect(notification["tag"] as? String == message.notificationID)
        #expect(Set(json.keys) == ["notification", "data", "notification_id", "type", "badge"])
    }

    /// A passive push (an alert's quiet later version) asks the service worker for a silent
    /// notification.
    @Test func aPassivePushIsSilent() throws {
        var message = Self.message(endpoint: "https://push.example/x", subscription: WebPushTestSubscription())
        message.interruptionLevel = .passive
        let json = try #require(try JSONSerialization.jsonObject(with: WebPushSender.plaintext(for: message)) as? [String: Any])
        #expect((json["notification"] as? [String: Any])?["silent"] as? Bool == true)
        message.interruptionLevel = .active
        let loud = try #require(try JSONSerialization.jsonObject(with: WebPushSender.plaintext(for: message)) as? [String: Any])
        #expect((loud["notification"] as? [String: Any])?["silent"] == nil)
    }

    /// One Web Push message holds 3993 bytes; a notification's data may hold 16 KiB.
    @Test func anOversizedPayloadKeepsWhatTheUserSees() throws {
        let subscription = WebPushTestSubscription()
        let bigData: JSONValue = ["notification_id": "ntf_1", "type": "trip.arriving", "blob": .string(String(repeating: "d", count: 5000))]
        let dataCut = Self.message(endpoint: "https://push.example/x", subscription: subscription, data: bigData)
        let cut = try #require(try JSONSerialization.jsonObject(with: WebPushSender.plaintext(for: dataCut)) as? [String: Any])
        #expect(cut["truncated"] as? Bool == true)
        #expect((cut["data"] as? [String: Any])?.keys.sorted() == ["notification_id", "notification_type", "type"])
        #expect((cut["data"] as? [String: Any])?["type"] as? String == "trip.arriving")
        #expect((cut["notification"] as? [String: Any])?["body"] as? String == "Your driver is 2 minutes away")

        let longBody = String(repeating: "é", count: 3000)  // 6000 bytes
        let bodyCut = Self.message(endpoint: "https://push.example/x", subscription: subscription, body: longBody, data: bigData)
        let plaintext = try WebPushSender.plaintext(for: bodyCut)
        #expect(plaintext.count <= WebPushEncryption.maxPlaintextSize)
        #expect(plaintext.count > WebPushEncryption.maxPlaintextSize - 16)
        let shortened = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
        let body = try #require((shortened["notification"] as? [String: Any])?["body"] as? String)
        #expect(body.hasSuffix("…") && longBody.hasPrefix(String(body.dropLast())))
        #expect(shortened["truncated"] as? Bool == true)
        // Still encryptable as one message.
        _ = try WebPushEncryption.encrypt(plaintext: plaintext, userAgentPublicKey: subscription.publicKey, authSecret: subscription.authSecret)

        let hugeTitle = PushMessage(
            deliveryID: "d", notificationID: "n", userID: "u", deviceID: "v", type: "t", severity: .info, provider: .webpush,
            platform: .web, token: "https://push.example/x", title: String(repeating: "t", count: 5000), body: nil, data: [:], badge: 0)
        #expect(throws: WebPushError.self) { try WebPushSender.plaintext(for: hugeTitle) }
    }
}
