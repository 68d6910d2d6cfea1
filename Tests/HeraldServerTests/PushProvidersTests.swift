import Foundation
import HeraldCore
import HeraldPush
import HeraldServer
import HeraldServerTestSupport
import Testing

@Suite struct PushProvidersTests {
    @Test func providerSettingsAreValidatedByName() {
        var config = HeraldConfig()
        config.push.apns = APNsConfig(
            teamID: "short", keyID: "KEY1234567", privateKeyFile: "", topic: "com.example.app", connections: 0)
        config.push.webpush = WebPushConfig(subject: "ops@example.com")
        let fields = Set(config.validationErrors().map(\.field))
        #expect(
            fields == [
                "push.apns.team_id", "push.apns.private_key_file", "push.apns.connections",
                "push.webpush.vapid_private_key", "push.webpush.subject",
            ])
    }

    @Test func browsersGetTheVAPIDPublicKeyWhenWebPushIsConfigured() async throws {
        let key = VAPIDKey.generate()
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.push.webpush = WebPushConfig(vapidPrivateKey: key.privateKeyBase64URL, subject: "mailto:ops@example.com")
            }
        ) { s in
            let reply = try await s.request(.get, "/api/v1/push/vapid-public-key")
            #expect(reply.status == 200 && reply.data?["public_key"] == .string(key.publicKeyBase64URL))
        }
        try await TestServer.run(.sqlite) { s in
            let unconfigured = try await s.request(.get, "/api/v1/push/vapid-public-key")
            #expect(unconfigured.status == 404)
        }
    }

    @Test func anUnusableAPNsKeyStopsStartUpNamingTheSetting() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-key.p8").path
        do {
            try await TestServer.run(
                .sqlite,
                configure: {
                    $0.push.apns = APNsConfig(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: missing, topic: "com.example.app")
                }
            ) { _ in }
            Issue.record("the server started with an unreadable APNs key")
        } catch let error as ConfigurationError {
            #expect(error.problems.map(\.field) == ["push.apns"])
        }
    }
}
