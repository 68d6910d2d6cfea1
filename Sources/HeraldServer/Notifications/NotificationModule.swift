import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import Hummingbird
import Logging
import ServiceLifecycle

/// The notifications module as the server runs it: the service, the push worker with the
/// configured providers (the log sender for any that is not), the ack fallback sweeper,
/// socket events and routes.
public struct NotificationModule: Sendable {
    public let service: NotificationService
    public let inbox: NotificationInbox
    public let registry: DeviceRegistry
    /// Live Activities: registrations, and the changes trips, jobs and departures publish.
    public let liveActivities: LiveActivityService
    /// Nil on nodes with `push.worker_enabled: false`.
    public let liveActivityWorker: LiveActivityWorker?
    /// Nil on nodes with `push.worker_enabled: false`.
    public let worker: DeliveryWorker?
    let services: [any Service]
    let clock: any HeraldClock
    /// The VAPID public key browsers subscribe with, by app (those with Web Push configured).
    public let vapidPublicKeys: [String: String]

    /// The senders for every app's configured providers (APNs: one per environment, whose
    /// connections open at its first push), and the HTTP clients they need run.
    public static func providerSenders(_ push: PushConfig, clock: any HeraldClock) async throws -> (
        senders: [PushRoute: any PushSender], clients: [any PushClient], vapidPublicKeys: [String: String]
    ) {
        var senders: [PushRoute: any PushSender] = [:]
        var clients: [any PushClient] = []
        var vapidPublicKeys: [String: String] = [:]
        let timeout = Duration.milliseconds(push.requestTimeoutMs)
        func configError(_ field: String, _ error: any Error) async -> ConfigurationError {
            // A client that was made must be shut down before it is dropped.
            for client in clients { await client.shutdown() }
            return ConfigurationError(problems: [FieldError(field: field, message: "cannot be used: \(error)")])
        }
        for (id, app) in push.resolvedApps.sorted(by: { $0.key < $1.key }) {
            let path = id == PushApps.defaultID && !push.apps.contains(where: { $0.id == id }) ? "push." : "push.apps[\(id)]."
            if let apns = app.apns {
                do {
                    for environment in APNsEnvironment.allCases {
                        let client = try APNsSender.makeClient(apns, environment: environment)
                        clients.append(client)
                        let channelClient = try APNsSender.makeChannelClient(apns, environment: environment)
                        clients.append(channelClient)
                        senders[PushRoute(provider: .apns, app: id, environment: environment)] = try await APNsSender(
                            config: apns, client: client, channelClient: channelClient, clock: clock, requestTimeout: timeout)
                    }
                } catch { throw await configError(path + "apns", error) }
            }
            if let fcm = app.fcm {
                do {
                    let http = try PushHTTP(caFile: fcm.caFile)
                    clients.append(http)
                    senders[PushRoute(provider: .fcm, app: id)] = try FCMSender(config: fcm, http: http, clock: clock, requestTimeout: timeout)
                } catch { throw await configError(path + "fcm", error) }
            }
            if let webpush = app.webpush {
                do {
                    let http = try PushHTTP(caFile: webpush.caFile)
                    clients.append(http)
                    let sender = try WebPushSender(config: webpush, http: http, clock: clock, requestTimeout: timeout)
                    vapidPublicKeys[id] = sender.vapidPublicKey
                    senders[PushRoute(provider: .webpush, app: id)] = sender
                } catch { throw await configError(path + "webpush", error) }
            }
        }
        return (senders, clients, vapidPublicKeys)
    }

    init(
        config: HeraldConfig, database: any Database, realtime: RealtimeGateway, schemaReady: StartupGate, clock: any HeraldClock, logger: Logger
    ) async throws {
        let hub = realtime.hub
        let ready: @Sendable () async -> Bool = { await schemaReady.wait() }
        var worker: DeliveryWorker?
        var liveActivityWorker: LiveActivityWorker?
        let logSender: LogPushSender
        do {
            logSender = try LogPushSender(logger: logger, file: config.push.logFile)
        } catch {
            throw ConfigurationError(problems: [FieldError(field: "push.log_file", message: "cannot be opened for appending")])
        }
        // Last of what can fail: the HTTP clients made here must run (and shut down) as services.
        let providers = try await Self.providerSenders(config.push, clock: clock)
        let apps = Set(config.push.resolvedApps.keys)
        let senders = PushSenders(providers.senders, environments: config.push.apnsEnvironments, fallback: logSender)
        // Every node makes the channels its requests ask for, worker or not.
        let liveActivities = LiveActivityService(
            database: database, config: config.notifications.liveActivities, apps: apps, senders: senders, clock: clock, logger: logger)
        if config.push.workerEnabled {
            worker = DeliveryWorker(
                database: database.background, senders: senders, clock: clock, settings: DeliveryWorker.Settings(config.push), logger: logger,
                ready: ready)
            liveActivityWorker = LiveActivityWorker(
                service: liveActivities, database: database.background, senders: senders, clock: clock, logger: logger, ready: ready)
        }
        let wakeWorker = worker
        let service = NotificationService(
            database: database, hub: hub, presence: realtime.presence, config: config.notifications, clock: clock, logger: logger,
            handoff: worker?.handoff, pushQueued: { wakeWorker?.wake() })
        hub.onAcknowledge(.delivery) { [weak service] deliveryID in await service?.acknowledged(deliveryID: deliveryID) }
        let inbox = NotificationInbox(service: service)
        NotificationSocketEvents(inbox: inbox, logger: logger).install(socketIO: realtime.socketIO, native: realtime.native)
        let sweepInterval = Duration.milliseconds(max(50, min(1000, config.notifications.ackTimeoutMs / 4)))
        // The provider clients before the worker: a ServiceGroup shuts services down in reverse
        // order, so the worker stops sending before the connections it sends on close.
        var services: [any Service] = providers.clients as [any Service]
        services.append(AckFallbackService(service: service, interval: sweepInterval, ready: ready))
        if let worker { services.append(worker) }
        if let liveActivityWorker { services.append(liveActivityWorker) }
        self.service = service
        self.inbox = inbox
        self.registry = DeviceRegistry(database: database, clock: clock, apps: apps)
        self.liveActivities = liveActivities
        self.liveActivityWorker = liveActivityWorker
        self.worker = worker
        self.services = services
        self.clock = clock
        self.vapidPublicKeys = providers.vapidPublicKeys
    }

    /// Push delivery metrics of this node's worker, in Prometheus text format.
    func renderMetrics() -> String {
        guard let worker else { return "" }
        var text = renderPushMetrics(worker)
        if let liveActivityWorker {
            text += "# HELP herald_live_activity_pushes_total Live Activity pushes on this node by event, priority and outcome.\n"
            text += "# TYPE herald_live_activity_pushes_total counter\n"
            for (key, count) in liveActivityWorker.statistics.snapshot.sorted(by: { "\($0.key)" < "\($1.key)" }) {
                text += "herald_live_activity_pushes_total{event=\"\(key.event)\",priority=\"\(key.priority)\",outcome=\"\(key.outcome)\"} \(count)\n"
            }
        }
        return text
    }

    private func renderPushMetrics(_ worker: DeliveryWorker) -> String {
        let stats = worker.statistics.snapshot
        var text = "# HELP herald_push_outcomes_total Push delivery attempts on this node by outcome.\n# TYPE herald_push_outcomes_total counter\n"
        for outcome in ["sent", "retry", "failed", "dead", "skipped"] {
            text += "herald_push_outcomes_total{outcome=\"\(outcome)\"} \(stats.outcomes[outcome] ?? 0)\n"
        }
        text += "# HELP herald_push_outcomes_by_type_total Push delivery attempts on this node by notification type, provider and outcome.\n"
        text += "# TYPE herald_push_outcomes_by_type_total counter\n"
        for (key, count) in stats.outcomesByType.sorted(by: { $0.key < $1.key }) {
            text += "herald_push_outcomes_by_type_total{type=\"\(key.type)\",provider=\"\(key.provider)\",outcome=\"\(key.outcome)\"} \(count)\n"
        }
        text += "# HELP herald_push_reasons_total Push failures and retries by provider reason.\n# TYPE herald_push_reasons_total counter\n"
        for (reason, count) in stats.reasons.sorted(by: { $0.key < $1.key }) {
            text += "herald_push_reasons_total{reason=\"\(reason)\"} \(count)\n"
        }
        text += "# HELP herald_push_send_duration_seconds Provider request latency.\n# TYPE herald_push_send_duration_seconds histogram\n"
        for (index, bound) in PushStatistics.latencyBucketsMs.enumerated() {
            text += "herald_push_send_duration_seconds_bucket{le=\"\(Double(bound) / 1000)\"} \(stats.latencyBuckets[index])\n"
        }
        text += "herald_push_send_duration_seconds_bucket{le=\"+Inf\"} \(stats.latencyCount)\n"
        text += "herald_push_send_duration_seconds_sum \(Double(stats.latencySumMs) / 1000)\n"
        text += "herald_push_send_duration_seconds_count \(stats.latencyCount)\n"
        text += "# HELP herald_push_queue_depth Push deliveries pending or in flight (all nodes), as last seen.\n# TYPE herald_push_queue_depth gauge\n"
        text += "herald_push_queue_depth \(stats.queueDepth)\n"
        return text
    }

    static func operations(_ config: NotificationsConfig) -> [APIOperation] {
        NotificationRoutes.operations(config) + PushRoutes.operations + VAPIDRoutes.operations + LiveActivityRoutes.operations
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        NotificationRoutes(service: service, inbox: inbox, preferences: PreferenceEditor(service: service), clock: clock).addRoutes(to: api)
        PushRoutes(registry: registry, clock: clock).addRoutes(to: api)
        VAPIDRoutes(publicKeys: vapidPublicKeys).addRoutes(to: api)
        LiveActivityRoutes(service: liveActivities, clock: clock).addRoutes(to: api)
    }
}
