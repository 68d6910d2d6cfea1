import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import Hummingbird
import Logging
import ServiceLifecycle

/// The notifications module as the server runs it: the service, the push worker (with the
/// log sender until providers are configured), the ack fallback sweeper, socket events and
/// routes.
public struct NotificationModule: Sendable {
    public let service: NotificationService
    public let inbox: NotificationInbox
    public let registry: DeviceRegistry
    /// Nil on nodes with `push.worker_enabled: false`.
    public let worker: DeliveryWorker?
    let services: [any Service]
    let clock: any HeraldClock

    init(config: HeraldConfig, database: any Database, realtime: RealtimeGateway, clock: any HeraldClock, logger: Logger) throws {
        let hub = realtime.hub
        let ready: @Sendable () async -> Bool = { await hub.waitUntilReady() }
        var worker: DeliveryWorker?
        if config.push.workerEnabled {
            let logSender: LogPushSender
            do {
                logSender = try LogPushSender(logger: logger, file: config.push.logFile)
            } catch {
                throw ConfigurationError(problems: [FieldError(field: "push.log_file", message: "cannot be opened for appending")])
            }
            worker = DeliveryWorker(
                database: database, senders: [:], fallback: logSender, clock: clock, settings: DeliveryWorker.Settings(config.push),
                logger: logger, ready: ready)
        }
        let wakeWorker = worker
        let service = NotificationService(
            database: database, hub: hub, presence: realtime.presence, config: config.notifications, clock: clock, logger: logger,
            pushQueued: { wakeWorker?.wake() })
        let inbox = NotificationInbox(service: service)
        NotificationSocketEvents(inbox: inbox, logger: logger).install(socketIO: realtime.socketIO, native: realtime.native)
        let sweepInterval = Duration.milliseconds(max(50, min(1000, config.notifications.ackTimeoutMs / 4)))
        var services: [any Service] = [AckFallbackService(service: service, interval: sweepInterval, ready: ready)]
        if let worker { services.append(worker) }
        self.service = service
        self.inbox = inbox
        self.registry = DeviceRegistry(database: database, clock: clock)
        self.worker = worker
        self.services = services
        self.clock = clock
    }

    /// Push outcomes of this node's worker, in Prometheus text format.
    func renderMetrics() -> String {
        guard let worker else { return "" }
        var text = "# HELP herald_push_outcomes_total Push delivery attempts on this node by outcome.\n# TYPE herald_push_outcomes_total counter\n"
        let counts = worker.outcomeCounts
        for outcome in ["sent", "retry", "failed", "dead", "skipped"] {
            text += "herald_push_outcomes_total{outcome=\"\(outcome)\"} \(counts[outcome] ?? 0)\n"
        }
        return text
    }

    static var operations: [APIOperation] { NotificationRoutes.operations + PushRoutes.operations }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        NotificationRoutes(service: service, inbox: inbox, preferences: PreferenceEditor(service: service), clock: clock).addRoutes(to: api)
        PushRoutes(registry: registry, database: service.database, clock: clock).addRoutes(to: api)
    }
}
