import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import HeraldTestSupport
import Testing

/// Several apps per deployment: each device's app and APNs environment choose its sender, a
/// type limited to some apps reaches only their devices, and registration keeps each app's
/// tokens apart.
@Suite struct PushAppsTests {
    static func message(app: String, provider: PushProvider = .apns, environment: APNsEnvironment? = nil) -> PushMessage {
        var message = PushMessage(
            deliveryID: "dlv_1", notificationID: "ntf_1", userID: "ann", deviceID: "dev_1", type: "job_new", severity: .alert, provider: provider,
            platform: provider == .webpush ? .web : .ios, token: "t", title: "Hi", body: nil, data: [:], badge: 0)
        message.app = app
        message.apnsEnvironment = environment
        return message
    }

    @Test func aPushTakesItsAppsSenderAndItsTokensEnvironment() {
        let customerProduction = ScriptedSender()
        let customerSandbox = ScriptedSender()
        let driverProduction = ScriptedSender()
        let driverSandbox = ScriptedSender()
        let driverFCM = ScriptedSender()
        let log = ScriptedSender()
        let senders = PushSenders(
            [
                PushRoute(provider: .apns, app: "default", environment: .production): customerProduction,
                PushRoute(provider: .apns, app: "default", environment: .sandbox): customerSandbox,
                PushRoute(provider: .apns, app: "driver", environment: .production): driverProduction,
                PushRoute(provider: .apns, app: "driver", environment: .sandbox): driverSandbox,
                PushRoute(provider: .fcm, app: "driver"): driverFCM,
            ],
            environments: ["default": .production, "driver": .sandbox], fallback: log)
        func chosen(_ message: PushMessage) -> ScriptedSender? { senders.sender(for: message) as? ScriptedSender }
        #expect(chosen(Self.message(app: "default")) === customerProduction)
        #expect(chosen(Self.message(app: "default", environment: .sandbox)) === customerSandbox)
        // A device that did not say its environment is in the app's configured one.
        #expect(chosen(Self.message(app: "driver")) === driverSandbox)
        #expect(chosen(Self.message(app: "driver", environment: .production)) === driverProduction)
        #expect(chosen(Self.message(app: "driver", provider: .fcm)) === driverFCM)
        // A provider the app leaves out, or an app no longer configured: the log sender.
        #expect(chosen(Self.message(app: "driver", provider: .webpush)) === log)
        #expect(chosen(Self.message(app: "retired")) === log)
        #expect(senders.route(for: Self.message(app: "driver")).description == "driver/apns/sandbox")
        // The environment means nothing to FCM.
        #expect(PushRoute(provider: .fcm, app: "driver", environment: .sandbox) == PushRoute(provider: .fcm, app: "driver"))
    }

    @Test func aTypeLimitedToAnAppReachesOnlyItsDevices() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database) { $0.typeApps = ["job_new": ["driver"]] }
            let phone = try await h.device("dan", app: "default")
            let driverPhone = try await h.device("dan", app: "driver")
            let job = try #require(try await h.service.send(h.draft(["dan"], type: "job_new")).first).notification
            let update = try #require(try await h.service.send(h.draft(["dan"], type: "trip_update")).first).notification
            while try await h.worker.runOnce() > 0 {}
            let sent = h.sender.sent
            #expect(sent.filter { $0.notificationID == job.id }.map(\.deviceID) == [driverPhone.id])
            #expect(Set(sent.filter { $0.notificationID == update.id }.map(\.deviceID)) == [phone.id, driverPhone.id])
            #expect(sent.first { $0.deviceID == driverPhone.id }?.app == "driver")
        }
    }

    @Test func registrationNamesTheAppAndAnAPNsTokensEnvironment() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let registry = DeviceRegistry(database: database, clock: ManualClock(), apps: ["default", "driver"])
            func register(_ body: [String: JSONValue]) async throws -> DeviceRecord {
                try await registry.register(userID: "dan", body: body, userAgent: nil).device
            }
            let token = String(repeating: "ab", count: 32)
            let customer = try await register(["token": .string(token), "provider": "apns", "platform": "ios", "device_id": "phone-1"])
            #expect(customer.appID == "default" && customer.apnsEnvironment == nil)
            // The driver app on the same phone (same vendor, same device_id) keeps the customer app's token active.
            let driver = try await register([
                "token": .string(String(repeating: "cd", count: 32)), "provider": "apns", "platform": "ios", "device_id": "phone-1", "app_id": "driver",
                "environment": "sandbox",
            ])
            #expect(driver.appID == "driver" && driver.apnsEnvironment == .sandbox)
            let devices = try await registry.devices(userID: "dan")
            #expect(devices.filter(\.isActive).count == 2)
            // A new token of the same app on the same phone replaces that app's old one only.
            _ = try await register([
                "token": .string(String(repeating: "ef", count: 32)), "provider": "apns", "platform": "ios", "device_id": "phone-1", "app_id": "driver",
            ])
            let after = try await registry.devices(userID: "dan")
            #expect(after.first { $0.id == driver.id }?.deactivationReason == "replaced")
            #expect(after.first { $0.id == customer.id }?.isActive == true)
            // Unknown apps, environments for other providers, and made-up environments are refused.
            for body: [String: JSONValue] in [
                ["token": .string(token), "provider": "apns", "platform": "ios", "app_id": "rider"],
                ["token": "fcm-token-1234567890", "provider": "fcm", "platform": "android", "environment": "sandbox"],
                ["token": .string(token), "provider": "apns", "platform": "ios", "environment": "staging"],
            ] {
                await #expect(throws: APIError.self) { try await register(body) }
            }
        }
    }

    @Test func configurationNamesAppsAndTheirProblems() {
        var push = PushConfig()
        push.apns = APNsConfig(teamID: "ABCDE12345", keyID: "KEY1234567", privateKeyFile: "/k.p8", topic: "com.example.customer")
        let driver = PushAppConfig(
            id: "driver", apns: APNsConfig(teamID: "ABCDE12345", keyID: "KEY7654321", privateKeyFile: "/d.p8", topic: "com.example.driver"))
        push.apps = [driver]
        #expect(push.validationErrors().isEmpty)
        #expect(Set(push.resolvedApps.keys) == ["default", "driver"])
        #expect(push.resolvedApps["default"]?.apns?.topic == "com.example.customer" && push.resolvedApps["driver"]?.apns?.topic == "com.example.driver")
        push.apps = [driver, PushAppConfig(id: "driver"), PushAppConfig(id: "Bad Name"), PushAppConfig(id: "default")]
        let fields = push.validationErrors().map(\.field)
        #expect(fields.contains("push.apps[1].id") && fields.contains("push.apps[2].id") && fields.contains("push.apps[3].id"))
        push.apps = [PushAppConfig(id: "driver", apns: APNsConfig(teamID: "short", keyID: "KEY7654321", privateKeyFile: "/d.p8", topic: "com.example.driver"))]
        #expect(push.validationErrors().map(\.field) == ["push.apps[0].apns.team_id"])
    }
}
