import Crypto
import Foundation
import HeraldCore
import HeraldPush
import HeraldTestFixtures
import JWTKit
import Synchronization
import Testing

/// A mock APNs and a sender configured for it.
struct APNsFixture {
    let server: MockPushServer
    let sender: APNsSender
    let client: APNsClient
    let publicKey: P256.Signing.PublicKey
    let clock: ManualClock

    static let token = String(repeating: "a1b2c3d4", count: 8)

    static func config(baseURL: String, caFile: String, connections: Int = 2) throws -> (APNsConfig) {
        try config(baseURL: baseURL, caFile: caFile, connections: connections, key: P256.Signing.PrivateKey())
    }

    static func config(baseURL: String, caFile: String, connections: Int = 2, key: P256.Signing.PrivateKey) throws -> APNsConfig {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8").path
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        var config = APNsConfig(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: keyFile, topic: "com.example.rider",
            environment: .sandbox, baseURL: baseURL, caFile: caFile)
        config.connections = connections
        return config
    }

    static func with(
        _ handler: @escaping MockPushServer.Handler, timeout: Duration = Patience.limit, connections: Int = 2,
        _ body: (APNsFixture) async throws -> Void
    ) async throws {
        try await withTeardown { teardown in
            let server = try await MockPushServer.start(handler)
            teardown.add("mock APNs") { try await server.stop() }
            let key = P256.Signing.PrivateKey()
            let config = try config(baseURL: server.baseURL, caFile: server.caFile, connections: connections, key: key)
            let client = try APNsSender.makeClient(config)
            teardown.add("APNs client") { await client.shutdown() }
            let clock = ManualClock(Date())
            let sender = try await APNsSender(config: config, client: client, clock: clock, requestTimeout: timeout)
            try await body(APNsFixture(server: server, sender: sender, client: client, publicKey: key.publicKey, clock: clock))
        }
    }

    static func message(body: String? = "Silver Camry, 4 min", deviceUpdatedAt: Int64? = nil) -> PushMessage {
        PushMessage(
            deliveryID: "dlv_test1", notificationID: "ntf_1", userID: "ann", deviceID: "dev_1", type: "driver_assigned",
            severity: .alert, provider: .apns, platform: .ios, token: token, title: "Alex is on the way", body: body,
            data: ["job_id": "job_42", "notification_id": "ntf_1"], category: "DRIVER_ASSIGNED", threadID: nil,
            collapseKey: "job_42", interruptionLevel: .timeSensitive, badge: 3, expiresAt: 1_900_000_000_000,
            deviceUpdatedAt: deviceUpdatedAt)
    }

    static func reply(_ status: Int, _ reason: String? = nil, extra: [String: Any] = [:], headers: [(String, String)] = []) -> MockPushServer.Response {
        var object = extra
        if let reason { object["reason"] = reason }
        return status == 200 ? MockPushServer.Response(status: 200, headers: [("apns-id", "X")] + headers) : .json(status, object, headers: headers)
    }
}

/// Answers from a list, one per request (the last one repeats).
final class Script: Sendable {
    private let answers: Mutex<[MockPushServer.Response]>
    init(_ answers: [MockPushServer.Response]) { self.answers = Mutex(answers) }
    func next() -> MockPushServer.Response {
        answers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
    }
}

@Suite struct APNsSenderTests {
    @Test func sendsWhatAPNsExpectsOverHTTP2() async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(200) }) { f in
            let result = try await f.sender.send(APNsFixture.message())
            #expect(result == .accepted(providerMessageID: "X"))
            let request = try #require(f.server.requests.first)
            #expect(request.protocolName == "h2")
            #expect(request.method == "POST" && request.path == "/3/device/\(APNsFixture.token)")
            #expect(request.header("apns-topic") == "com.example.rider")
            #expect(request.header("apns-push-type") == "alert" && request.header("apns-priority") == "10")
            #expect(request.header("apns-collapse-id") == "job_42")
            #expect(request.header("apns-expiration") == "1900000000")
            let apnsID = try #require(request.header("apns-id"))
            #expect(apnsID == APNsSender.apnsID(forDelivery: "dlv_test1"))
            #expect(UUID(uuidString: apnsID) != nil)
            // The provider token verifies with the team's public key.
            let jwt = try #require(request.header("authorization")?.replacingOccurrences(of: "bearer ", with: ""))
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PublicKey(pem: f.publicKey.pemRepresentation), kid: "KEY1234567")
            struct Claims: JWTPayload {
                let iss: IssuerClaim
                let iat: IssuedAtClaim
                func verify(using algorithm: some JWTAlgorithm) async throws {}
            }
            let claims = try await keys.verify(jwt, as: Claims.self)
            #expect(claims.iss.value == "TEAM123456")
            let header = try JSONDecoder().decode(JSONValue.self, from: Data(base64URL: String(jwt.split(separator: ".")[0]))!)
            #expect(header["alg"] == "ES256" && header["kid"] == "KEY1234567")
            // The payload.
            let payload = try #require(request.json)
            let aps = try #require(payload["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] as? String == "Alex is on the way" && alert["body"] as? String == "Silver Camry, 4 min")
            #expect(aps["badge"] as? Int == 3 && aps["category"] as? String == "DRIVER_ASSIGNED")
            #expect(aps["interruption-level"] as? String == "time-sensitive" && aps["thread-id"] as? String == "job_42")
            #expect(payload["job_id"] as? String == "job_42" && payload["notification_id"] as? String == "ntf_1")
        }
    }

    @Test func theProviderTokenVerifiesWithPyJWT() async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(200) }) { f in
            _ = try await f.sender.send(APNsFixture.message())
            let jwt = try #require(f.server.requests.first?.header("authorization")?.replacingOccurrences(of: "bearer ", with: ""))
            let output = try await PythonInterop.run(
                """
                import sys, json, jwt
                token, pem = sys.argv[1], sys.argv[2]
                header = jwt.get_unverified_header(token)
                claims = jwt.decode(token, pem, algorithms=["ES256"], options={"verify_aud": False})
                print(json.dumps({"kid": header["kid"], "alg": header["alg"], "iss": claims["iss"], "iat": isinstance(claims["iat"], int)}))
                """, arguments: [jwt, f.publicKey.pemRepresentation])
            #expect(output == #"{"kid": "KEY1234567", "alg": "ES256", "iss": "TEAM123456", "iat": true}"#)
        }
    }

    @Test(arguments: [
        (400, "BadDeviceToken", PushResult.tokenGone(.apns(.badDeviceToken))),
        (400, "DeviceTokenNotForTopic", .tokenGone(.apns(.deviceTokenNotForTopic))),
        (410, "Unregistered", .tokenGone(.apns(.unregistered))),
        (410, "ExpiredToken", .tokenGone(.apns(.expiredToken))),
        (400, "BadTopic", .refused(.apns(.badTopic))),
        (400, "BadCollapseId", .refused(.apns(.badCollapseID))),
        (403, "InvalidProviderToken", .refused(.apns(.invalidProviderToken))),
        (404, "BadPath", .refused(.apns(.badPath))),
        (429, "TooManyRequests", .retryLater(.apns(.tooManyRequests), after: .seconds(30))),
        (500, "InternalServerError", .retryLater(.apns(.internalServerError), after: .seconds(30))),
        (503, "ServiceUnavailable", .retryLater(.apns(.serviceUnavailable), after: .seconds(30))),
    ])
    func answersAreClassifiedAsApplesTableSays(status: Int, reason: String, expected: PushResult) async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(status, reason, headers: [("retry-after", "30")]) }) { f in
            let result = try await f.sender.send(APNsFixture.message())
            #expect(result == expected)
        }
    }

    @Test func aTokenReRegisteredAfterAPNsSawItGoIsKept() async throws {
        let gone: Int64 = 1_800_000_000_000
        try await APNsFixture.with({ _ in APNsFixture.reply(410, "Unregistered", extra: ["timestamp": gone]) }) { f in
            let sent1 = try await f.sender.send(APNsFixture.message(deviceUpdatedAt: gone - 1000))
            #expect(sent1 == .tokenGone(.apns(.unregistered)))
            let kept = try await f.sender.send(APNsFixture.message(deviceUpdatedAt: gone + 1000))
            #expect(kept == .refused(.apns(.goneBeforeReRegistration(.unregistered))), "a newer registration is kept")
        }
    }

    @Test func anExpiredProviderTokenIsRenewedOnceAndTheSendRetried() async throws {
        let script = Script([APNsFixture.reply(403, "ExpiredProviderToken"), APNsFixture.reply(200)])
        try await APNsFixture.with({ _ in script.next() }) { f in
            let sent2 = try await f.sender.send(APNsFixture.message())
            #expect(sent2 == .accepted(providerMessageID: "X"))
            let tokens = f.server.requests.compactMap { $0.header("authorization") }
            #expect(tokens.count == 2 && tokens[0] != tokens[1])
            #expect(await f.sender.providerToken.signed == 2)
        }
    }

    @Test func providerTokensLiveBetweenTwentyAndSixtyMinutes() async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(200) }) { f in
            let token = f.sender.providerToken
            let first = try await token.token()
            f.clock.advance(by: 49 * 60)
            #expect(try await token.token() == first)
            f.clock.advance(by: 2 * 60)
            let second = try await token.token()
            #expect(second != first)
            // Many requests rejected with the old token renew once.
            #expect(try await token.renew(rejected: first) == second)
            #expect(await token.signed == 2)
        }
    }

    @Test func a413ShortensTheBodyAndRetriesOnce() async throws {
        let script = Script([APNsFixture.reply(413, "PayloadTooLarge"), APNsFixture.reply(200)])
        try await APNsFixture.with({ _ in script.next() }) { f in
            let long = String(repeating: "Traffic is heavy on the bridge. ", count: 40)
            let sent3 = try await f.sender.send(APNsFixture.message(body: long))
            #expect(sent3 == .accepted(providerMessageID: "X"))
            let bodies = f.server.requests.compactMap { (($0.json?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String }
            #expect(bodies.count == 2 && bodies[1].utf8.count < bodies[0].utf8.count && bodies[1].hasSuffix("…"))
        }
        try await APNsFixture.with({ _ in APNsFixture.reply(413, "PayloadTooLarge") }) { f in
            let sent4 = try await f.sender.send(APNsFixture.message())
            #expect(sent4 == .refused(.apns(.payloadTooLarge)))
            #expect(f.server.requests.count == 2)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aStalledAPNsCostsOneDeadline() async throws {
        // The mock answers only once the test opens the gate, after the send returned: nothing
        // but the sender's own 300 ms deadline can end the send (a hang is the time limit).
        let gate = Gate()
        try await APNsFixture.with(
            { _ in
                await gate.wait()
                return APNsFixture.reply(200)
            }, timeout: .milliseconds(300)
        ) { f in
            defer { gate.open() }  // the stalled answer goes out before the mock stops
            // The sender's own deadline ends it: a retry the worker schedules, not a hung send.
            let result = try await f.sender.send(APNsFixture.message())
            #expect(result == .retryLater(.transport(.timeout), after: nil))
            #expect(!gate.isOpen)
        }
    }

    @Test func sendingGoesOnAfterAGOAWAY() async throws {
        let script = Script([MockPushServer.Response(status: 200, headers: [("apns-id", "X")], goAway: true), APNsFixture.reply(200)])
        try await APNsFixture.with({ _ in script.next() }) { f in
            let sent5 = try await f.sender.send(APNsFixture.message())
            #expect(sent5 == .accepted(providerMessageID: "X"))
            // The connection closes 50 ms after the GOAWAY; a send racing that close may fail,
            // but sending goes on on a new connection (a client stuck on the old one never would).
            try await waitUntil("a send accepted after the GOAWAY", every: .milliseconds(100)) {
                if case .accepted? = try? await f.sender.send(APNsFixture.message()) { return true }
                return false
            }
        }
    }
}

@Suite struct APNsPayloadTests {
    @Test func longBodiesAreShortenedToTheLimitKeepingValidUTF8() throws {
        var message = APNsFixture.message(body: String(repeating: "é🚕", count: 2000))
        let payload = try APNsPayload.encode(message)
        #expect(payload.count <= 4096)
        let decoded = try JSONSerialization.jsonObject(with: payload) as? [String: Any]
        let body = ((decoded?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String
        #expect(body?.hasSuffix("…") == true && (body?.utf8.count ?? 0) > 3000)
        message.body = "short"
        #expect(try APNsPayload.encode(message).count < 1000)
        message.data = ["blob": .string(String(repeating: "x", count: 5000))]
        #expect(throws: APNsPayload.TooLarge.self) { try APNsPayload.encode(message) }
    }

    @Test func localisationKeysGoIntoTheAlertAndSilentPushesShowNothing() throws {
        var message = APNsFixture.message()
        message.data = ["loc_key": "DRIVER_CLOSE", "loc_args": ["Alex", "4"], "trip_id": "tr_1"]
        let payload = try JSONSerialization.jsonObject(with: APNsPayload.encode(message)) as? [String: Any]
        let alert = (payload?["aps"] as? [String: Any])?["alert"] as? [String: Any]
        // The key, and the plain text beside it for a build of the app without the key.
        #expect(alert?["loc-key"] as? String == "DRIVER_CLOSE" && alert?["body"] as? String == message.body)
        #expect(payload?["loc_key"] == nil && payload?["trip_id"] as? String == "tr_1")
        message.silent = true
        let silent = try JSONSerialization.jsonObject(with: APNsPayload.encode(message)) as? [String: Any]
        let aps = silent?["aps"] as? [String: Any]
        #expect(aps?["content-available"] as? Int == 1 && aps?["alert"] == nil && aps?["badge"] == nil)
    }

    @Test func apnsIDsAreStableUUIDs() {
        let id = APNsSender.apnsID(forDelivery: "dlv_abc")
        #expect(id == APNsSender.apnsID(forDelivery: "dlv_abc"))
        #expect(id != APNsSender.apnsID(forDelivery: "dlv_abd"))
        #expect(UUID(uuidString: id) != nil && id.count == 36)
        // The same bytes as before the hex writer was rewritten (a resend after an upgrade
        // must still carry the same apns-id): SHA-256, version 8, variant 10, upper-case.
        for delivery in ["dlv_abc", "dlv_01JD5R8Y4W2KQ7X9ABCDEF", "", "dlv_é🚕"] {
            var bytes = Array(SHA256.hash(data: Data(delivery.utf8)).prefix(16))
            bytes[6] = (bytes[6] & 0x0F) | 0x80
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            let hex = bytes.map { String(format: "%02X", $0) }.joined()
            let groups = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
            #expect(APNsSender.apnsID(forDelivery: delivery) == groups.map(String.init).joined(separator: "-"))
        }
    }

    /// What the payload was before it was written by hand: the dictionaries JSONEncoder
    /// serialized with sorted keys. The hand-written one must match it byte for byte.
    static func referencePayload(_ message: PushMessage, body: String?) throws -> Data {
        var custom: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if case .object(let data) = message.data {
            for (key, value) in data {
                if let apnsKey = ["title_loc_key": "title-loc-key", "title_loc_args": "title-loc-args", "loc_key": "loc-key", "loc_args": "loc-args"][key] {
                    alert[apnsKey] = value
                } else {
                    custom[key] = value
                }
            }
        }
        var aps: [String: JSONValue] = [:]
        if message.silent {
            aps["content-available"] = 1
        } else {
            alert["title"] = .string(message.title)
            if let body { alert["body"] = .string(body) }
            aps["alert"] = .object(alert)
            if message.interruptionLevel != .passive { aps["sound"] = "default" }
            aps["badge"] = .number(Double(message.badge))
            aps["mutable-content"] = 1
            if let category = message.category { aps["category"] = .string(category) }
            if let level = message.interruptionLevel { aps["interruption-level"] = .string(level.rawValue) }
        }
        if let thread = message.threadID ?? message.collapseKey { aps["thread-id"] = .string(thread) }
        custom["aps"] = .object(aps)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(JSONValue.object(custom))
    }

    /// An alert's later version inside its cooldown is sent passive: it replaces what the
    /// phone shows without a sound. Loc keys never stand alone: the text goes beside them.
    @Test func aPassivePushIsQuietAndLocKeysKeepThePlainText() throws {
        var message = APNsFixture.message()
        message.interruptionLevel = .passive
        message.data = ["loc_key": "ALERT_BODY_DELAY_SHORT", "loc_args": ["10", "signal failure"], "title_loc_key": "ALERT_TITLE_DELAY"]
        let payload = try JSONDecoder().decode(JSONValue.self, from: APNsPayload.encode(message))
        let aps = payload["aps"]
        #expect(aps?["sound"] == nil)
        #expect(aps?["interruption-level"] == "passive")
        #expect(aps?["alert"]?["loc-key"] == "ALERT_BODY_DELAY_SHORT" && aps?["alert"]?["title-loc-key"] == "ALERT_TITLE_DELAY")
        #expect(aps?["alert"]?["title"] == .string(message.title) && aps?["alert"]?["body"] == message.body.map(JSONValue.string))
        message.interruptionLevel = .active
        let loud = try JSONDecoder().decode(JSONValue.self, from: APNsPayload.encode(message))
        #expect(loud["aps"]?["sound"] == "default")
    }

    @Test func thePayloadIsByteForByteWhatJSONEncoderWrote() throws {
        var messages: [PushMessage] = []
        var plain = APNsFixture.message()
        messages.append(plain)
        plain.data = ["a_first": 1, "zz": ["nested": [1, 2.5, "x/y \"q\"\n"]], "notification_id": "ntf_1", "aps": "ignored", "b": .null]
        messages.append(plain)
        plain.category = nil
        plain.interruptionLevel = nil
        plain.collapseKey = nil
        plain.body = nil
        plain.data = [:]
        messages.append(plain)
        var localized = APNsFixture.message()
        localized.data = ["loc_key": "RIDE_BODY", "loc_args": ["Alex", "4"], "title_loc_key": "RIDE_TITLE", "ride": "r_1"]
        messages.append(localized)
        var passive = APNsFixture.message()
        passive.interruptionLevel = .passive
        messages.append(passive)
        var silent = APNsFixture.message()
        silent.silent = true
        silent.threadID = "trip:tr_9"
        messages.append(silent)
        var unicode = APNsFixture.message(body: "Café ☕️ — 5 min\u{0001}")
        unicode.title = "Ünïcode \\ title"
        unicode.badge = 0
        messages.append(unicode)
        for message in messages {
            let ours = try APNsPayload.encode(message)
            let reference = try Self.referencePayload(message, body: message.body)
            #expect(String(decoding: ours, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
        }
    }
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}

@Suite struct APNsCollapseIDTests {
    /// A push without a collapse key still carries one: its notification id. A copy re-sent
    /// after a crash (its acceptance unrecorded) then replaces the first on the device instead
    /// of showing twice; the sender's own collapse key wins where there is one.
    @Test func theNotificationIDCollapsesResentCopies() {
        var message = APNsFixture.message()
        message.collapseKey = nil
        let headers = Dictionary(APNsSender.headers(for: message, topic: "com.example.app"), uniquingKeysWith: { first, _ in first })
        #expect(headers["apns-collapse-id"] == message.notificationID)
        message.collapseKey = "job_42"
        let keyed = Dictionary(APNsSender.headers(for: message, topic: "com.example.app"), uniquingKeysWith: { first, _ in first })
        #expect(keyed["apns-collapse-id"] == "job_42")
    }
}
