import ArgumentParser
import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldSchema
import HeraldServer
import HeraldStorage

/// `herald push-test --user U`: one test push to each of the user's active devices through
/// whatever is configured (or the log sender), printing each provider's answer.
///
/// Why direct and not through the outbox: it answers "does my APNs key / FCM account / VAPID
/// key work?" at once, without a running server or a notification in anyone's inbox.
struct PushTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-test", abstract: "Send a test push to every active device of a user and print the answers.")

    @OptionGroup var common: CommonOptions

    @Option(help: "The user whose devices get the test push.")
    var user: String

    @Option(help: "The title of the test push.")
    var title: String = "Herald test push"

    func run() async throws {
        let config = try common.load()
        let logger = makeLogger(config)
        let database = try await DatabaseFactory.open(try config.resolvedDatabaseURL(), config: config, logger: logger)
        let clock = SystemClock()
        let user = self.user
        let title = self.title
        try await database.running { () -> Void in
            try await HeraldSchema.migrator.migrate(database, logger: logger, deadline: .seconds(30))
            let (devices, badge) = try await DeviceRegistry(database: database, clock: clock).pushTargets(userID: user)
            guard !devices.isEmpty else {
                print("\(user) has no active device.")
                return
            }
            let providers = try await NotificationModule.providerSenders(config.push, clock: clock)
            let fallback = try LogPushSender(logger: logger, file: config.push.logFile)
            let environments = config.push.apnsEnvironments
            let senders = PushSenders(providers.senders, environments: environments, fallback: nil)
            var answered = 0
            // Each answer as it comes (a user with many devices, a slow provider).
            func report(_ line: String) {
                answered += 1
                print("[\(answered)/\(devices.count)] \(line)")
                fflush(nil)
            }
            for device in devices {
                var message = PushMessage(
                    deliveryID: Identifier.make("dlv"), notificationID: "push-test", userID: user, deviceID: device.id,
                    type: "push_test", severity: .info, provider: device.provider, platform: device.platform, token: device.token,
                    webpushP256dh: device.webpushP256dh, webpushAuth: device.webpushAuth, title: title,
                    body: "Sent by herald push-test at \(Timestamp.string(clock.now()))", data: ["push_test": true], badge: badge,
                    deviceUpdatedAt: device.lastUsedAt)
                message.app = device.appID
                message.apnsEnvironment = device.apnsEnvironment
                let chosen = senders.sender(for: message)
                let sender = chosen ?? fallback
                // The default app's route is named by its provider alone, as before apps existed.
                let route = senders.route(for: message)
                let plain = route.app == PushApps.defaultID && (route.environment == nil || route.environment == environments[route.app])
                let via = chosen == nil ? "log sender" : plain ? route.provider.rawValue : route.description
                do {
                    let result = try await withDeadline(.milliseconds(config.push.requestTimeoutMs)) { [message] in try await sender.send(message) }
                    report("\(device.id) (\(device.platform.rawValue), \(via)): \(Self.summary(result))")
                } catch {
                    report("\(device.id) (\(device.platform.rawValue), \(via)): error \(error)")
                }
            }
            for client in providers.clients { await client.shutdown() }
        }
    }

    /// One device's answer as an operator reads it: `delivered` with the provider's id, or
    /// what the provider said and what the worker would do about it.
    static func summary(_ result: PushResult) -> String {
        switch result {
        case .accepted(let id): "delivered" + (id.map { " (provider message id \($0))" } ?? "")
        case .retryLater(let failure, let after):
            "not delivered, would retry: \(failure)" + (after.map { " (retry after \($0.components.seconds) s)" } ?? "")
        case .tokenGone(let failure): "token gone, device would be deactivated: \(failure)"
        case .refused(let failure): "refused: \(failure)"
        }
    }
}
