import Foundation
import HeraldNotifications
import HeraldPush
import Testing

private func base64URL(_ bytes: [UInt8], padded: Bool = false) -> String {
    let text = Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
    return padded ? text : text.replacingOccurrences(of: "=", with: "")
}

/// Bytes chosen so their base64 needs '-' and '_' (0xfb, 0xff), proving the url alphabet is read.
private let pointBytes: [UInt8] = [0x04] + (0..<64).map { UInt8($0 % 2 == 0 ? 0xfb : 0xff) }
private let authBytes: [UInt8] = (0..<16).map { UInt8(0xf0 + $0) }
private let sampleEndpoint = "https://fcm.googleapis.com/fcm/send/dXk3:APA91bH"

private let apnsToken = String(repeating: "0123456789abcdef", count: 4)
private let fcmToken = "dXk3Qm9vS2V5_-abc:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"

private let malformedAPNsTokens: [String] = [
    String(apnsToken.dropLast()),  // 63: odd and too short
    apnsToken + "a",  // 65: odd
    String(apnsToken.dropLast(2)),  // 62: too short
    String(repeating: "ab", count: 101),  // 202: too long
    String(apnsToken.dropLast()) + "g",  // not hex
    "<" + apnsToken + ">",  // the old NSData description form
    String(apnsToken.prefix(32)) + " " + String(apnsToken.suffix(31)),  // whitespace
    " " + apnsToken,
    "",
]

private let malformedFCMTokens: [String] = [
    "dXk3Qm9vS2V5:APA91b",  // 19: too short
    String(repeating: "a", count: 4097),
    String(fcmToken.prefix(20)) + " " + String(fcmToken.dropFirst(20)),  // a space
    fcmToken + "\n",
    String(fcmToken.dropLast()) + ".",
    String(fcmToken.dropLast()) + "=",
    String(fcmToken.dropLast()) + "é",
]

private let goodEndpoints: [String] = [
    "https://updates.push.services.mozilla.com/wpush/v2/gAAAA",
    "HTTPS://Push.Example.com/x",
    "http://localhost:8080/push/1",
    "http://127.0.0.1:9000/push/1",
    "http://[::1]:9000/push/1",
]

private let badEndpoints: [String] = [
    "http://example.com/push",
    "http://localhost.example.com/push",
    "ftp://example.com/push",
    "https://",
    "https:///push",
    "https:push.example.com",
    "//push.example.com/x",
    "push.example.com/x",
    "https://push example.com/",
    "",
    "https://push.example.com/" + String(repeating: "a", count: 2048),
]

@Suite struct DeviceTokenRulesTests {
    @Test func acceptsWellFormedTokens() {
        #expect(DeviceTokenRules.problems(token: apnsToken, provider: .apns).isEmpty)
        #expect(DeviceTokenRules.problems(token: apnsToken.uppercased(), provider: .apns).isEmpty)
        #expect(DeviceTokenRules.problems(token: String(repeating: "ab", count: 100), provider: .apns).isEmpty)
        #expect(DeviceTokenRules.problems(token: fcmToken, provider: .fcm).isEmpty)
        #expect(DeviceTokenRules.problems(token: String(repeating: "a", count: 4096), provider: .fcm).isEmpty)
        #expect(DeviceTokenRules.problems(token: sampleEndpoint, provider: .webpush).isEmpty)
    }

    @Test(arguments: malformedAPNsTokens)
    func refusesMalformedAPNsTokens(token: String) {
        #expect(!DeviceTokenRules.problems(token: token, provider: .apns).isEmpty)
    }

    @Test func namesEachAPNsProblem() {
        #expect(DeviceTokenRules.problems(token: apnsToken + "a", provider: .apns) == ["must have an even number of hexadecimal characters (whole bytes)"])
        #expect(DeviceTokenRules.problems(token: String(apnsToken.dropLast(2)) + "zz", provider: .apns) == ["must be 64 to 200 hexadecimal characters"])
    }

    @Test(arguments: malformedFCMTokens)
    func refusesMalformedFCMTokens(token: String) {
        #expect(!DeviceTokenRules.problems(token: token, provider: .fcm).isEmpty)
    }

    @Test func fcmRefusalSaysWhatIsAllowed() {
        #expect(DeviceTokenRules.problems(token: fcmToken + " ", provider: .fcm) == ["must contain only letters, digits, '-', '_' and ':'"])
    }

    @Test func normalizesOnlyAPNsTokens() {
        #expect(DeviceTokenRules.normalized(token: apnsToken.uppercased(), provider: .apns) == apnsToken)
        #expect(DeviceTokenRules.normalized(token: "ABC:def", provider: .fcm) == "ABC:def")
        #expect(DeviceTokenRules.normalized(token: "https://Push.example/AbC", provider: .webpush) == "https://Push.example/AbC")
    }

    @Test(arguments: goodEndpoints)
    func acceptsEndpoints(endpoint: String) {
        #expect(DeviceTokenRules.problems(token: endpoint, provider: .webpush).isEmpty)
    }

    @Test(arguments: badEndpoints)
    func refusesEndpoints(endpoint: String) {
        #expect(!DeviceTokenRules.problems(token: endpoint, provider: .webpush).isEmpty)
    }

    @Test func platformCompatibility() {
        let allowed: [PushProvider: Set<DevicePlatform>] = [.apns: [.ios], .fcm: [.ios, .android, .web], .webpush: [.web]]
        for provider in PushProvider.allCases {
            for platform in DevicePlatform.allCases {
                let ok = DeviceTokenRules.platformProblems(provider: provider, platform: platform).isEmpty
                #expect(ok == allowed[provider]?.contains(platform), "\(provider) on \(platform)")
            }
        }
        #expect(DeviceTokenRules.platformProblems(provider: .apns, platform: .android) == ["apns tokens are only valid for platform ios, not android"])
    }
}

@Suite struct WebPushSubscriptionTests {
    let p256dh = base64URL(pointBytes)
    let auth = base64URL(authBytes)

    func fields(endpoint: String = sampleEndpoint, p256dh: String? = nil, auth: String? = nil) -> [String] {
        let (subscription, problems) = WebPushSubscription.validate(endpoint: endpoint, p256dh: p256dh ?? self.p256dh, auth: auth ?? self.auth)
        #expect((subscription == nil) == !problems.isEmpty)
        return problems.map(\.field)
    }

    @Test func acceptsABrowserSubscription() throws {
        #expect(p256dh.contains("-") && p256dh.contains("_"))
        let (subscription, problems) = WebPushSubscription.validate(endpoint: sampleEndpoint, p256dh: p256dh, auth: auth)
        #expect(problems.isEmpty)
        #expect(subscription == WebPushSubscription(endpoint: sampleEndpoint, p256dh: p256dh, auth: auth))
    }

    @Test func paddedKeysAreStoredUnpadded() {
        let (subscription, problems) = WebPushSubscription.validate(
            endpoint: sampleEndpoint, p256dh: base64URL(pointBytes, padded: true), auth: base64URL(authBytes, padded: true))
        #expect(problems.isEmpty)
        #expect(subscription?.p256dh == p256dh)
        #expect(subscription?.auth == auth)
    }

    @Test func refusesKeysOfTheWrongShape() {
        let key = "subscription.keys.p256dh"
        #expect(fields(p256dh: base64URL(Array(pointBytes.prefix(64)))) == [key])
        #expect(fields(p256dh: base64URL(pointBytes + [0])) == [key])
        #expect(fields(p256dh: base64URL([0x02] + pointBytes.dropFirst())) == [key])  // a compressed-point prefix
        #expect(fields(p256dh: base64URL([0x02] + pointBytes.dropFirst(33))) == [key])  // a whole compressed point
        #expect(fields(auth: base64URL(Array(authBytes.prefix(15)))) == ["subscription.keys.auth"])
        #expect(fields(auth: base64URL(authBytes + [0])) == ["subscription.keys.auth"])
    }

    @Test func refusesTextThatIsNotBase64URL() {
        let standardBase64 = Data(pointBytes).base64EncodedString()
        #expect(standardBase64.contains("+") || standardBase64.contains("/"))
        #expect(fields(p256dh: standardBase64) == ["subscription.keys.p256dh"])
        #expect(fields(p256dh: p256dh + "!") == ["subscription.keys.p256dh"])
        #expect(fields(p256dh: " " + p256dh) == ["subscription.keys.p256dh"])
        #expect(fields(auth: "") == ["subscription.keys.auth"])
        #expect(fields(auth: auth + "=") == ["subscription.keys.auth"])  // 23 characters: bad padding
        #expect(fields(auth: "=" + auth) == ["subscription.keys.auth"])
        #expect(fields(auth: String(auth.dropLast(2)) + "=" + String(auth.suffix(1))) == ["subscription.keys.auth"])
        #expect(fields(auth: auth + "A") == ["subscription.keys.auth"])  // 23 characters: 4n+3 decodes to 17 bytes
    }

    @Test func reportsEveryBadField() {
        let (subscription, problems) = WebPushSubscription.validate(endpoint: "http://example.com/push", p256dh: "nope!", auth: "AAAA")
        #expect(subscription == nil)
        #expect(problems.map(\.field) == ["subscription.endpoint", "subscription.keys.p256dh", "subscription.keys.auth"])
        #expect(problems.allSatisfy { !$0.message.isEmpty })
    }

    @Test func refusesEndpointsLikeTheTokenRules() {
        #expect(fields(endpoint: "http://example.com/push") == ["subscription.endpoint"])
        #expect(fields(endpoint: "ftp://example.com/push") == ["subscription.endpoint"])
        #expect(fields(endpoint: "https:///push") == ["subscription.endpoint"])
        #expect(fields(endpoint: "http://127.0.0.1:9000/push").isEmpty)
    }

    @Test func codesInTheBrowsersShape() throws {
        let subscription = WebPushSubscription(endpoint: sampleEndpoint, p256dh: p256dh, auth: auth)
        let data = try JSONEncoder().encode(subscription)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["endpoint"] as? String == sampleEndpoint)
        #expect(object["keys"] as? [String: String] == ["p256dh": p256dh, "auth": auth])
        #expect(try JSONDecoder().decode(WebPushSubscription.self, from: data) == subscription)

        let browser = #"{"endpoint":"\#(sampleEndpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#
        #expect(try JSONDecoder().decode(WebPushSubscription.self, from: Data(browser.utf8)) == subscription)
    }
}
