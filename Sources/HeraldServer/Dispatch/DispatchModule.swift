import HeraldCore
import HeraldDispatch
import HeraldPayments
import HeraldStorage
import Hummingbird
import Logging
import ServiceLifecycle

/// The dispatch module as the server runs it: the service, its socket events and channel
/// rules, the offer scheduler and the index sync, and its routes.
public struct DispatchModule: Sendable {
    public let service: DispatchService
    /// Writes buffered driver positions (tests call `flush()` to see them in the database).
    public let indexSync: DriverIndexSync
    let services: [any Service]
    let clock: any HeraldClock

    /// Offers, claims and the drivers' location stream on this node, in Prometheus text format.
    func renderMetrics() -> String {
        let s = service.statistics.snapshot
        var text =
            "# HELP herald_dispatch_job_offers_total Drivers offered a job (one per driver per round).\n# TYPE herald_dispatch_job_offers_total counter\n"
        text += "herald_dispatch_job_offers_total \(s.jobOffers)\n"
        text += s.claims.render("herald_dispatch_claims_total", help: "Job claims by outcome.", label: "outcome", labels: ["won", "lost"])
        text += s.locationSamples.render(
            "herald_driver_location_samples_total", help: "Driver location samples by outcome.", label: "outcome",
            labels: ["accepted", "stale", "throttled", "unknown_driver"])
        text += s.locationAccuracy.render("herald_driver_location_accuracy_meters", help: "Reported accuracy of accepted samples.")
        text += s.locationAge.render(
            "herald_driver_location_age_seconds", help: "Time from a sample's fix on the device to its arrival (samples with a timestamp).")
        return text
    }

    init(
        config: HeraldConfig, database: any Database, realtime: RealtimeGateway, notifications: NotificationModule, schemaReady: StartupGate,
        clock: any HeraldClock, logger: Logger
    ) {
        let service = DispatchService(
            database: database, hub: realtime.hub, notifications: notifications.service, config: config.dispatch, clock: clock, logger: logger,
            payments: config.payments, gateway: Self.gateway(config.payments, database: database, clock: clock, logger: logger),
            liveActivities: notifications.liveActivities)
        notifications.liveActivities.setSource(service.liveActivitySource, for: .job)
        DispatchSocketEvents(dispatch: service).install(socketIO: realtime.socketIO, native: realtime.native, channels: realtime.channels)
        let ready: @Sendable () async -> Bool = { await schemaReady.wait() }
        let sync = DriverIndexSync(
            dispatch: service, interval: .milliseconds(config.dispatch.indexSyncIntervalMs), pullsChanges: database.engine == .postgres, ready: ready)
        self.service = service
        self.indexSync = sync
        self.services = [service.offerScheduler(ready: ready), service.adjustmentScheduler(ready: ready), sync]
        self.clock = clock
    }

    /// The configured payment provider (`payments.provider`; validated at start). Stripe keeps
    /// each user's Customer in the shared database, so every node charges the same one.
    static func gateway(_ config: PaymentsConfig, database: any Database, clock: any HeraldClock, logger: Logger) -> any PaymentGateway {
        if config.provider == .stripe, let key = config.stripe.secretKey {
            return StripeGateway(
                baseURL: config.stripe.baseURL, secretKey: key, apiVersion: config.stripe.apiVersion, timeout: .seconds(config.stripe.timeoutSeconds),
                customers: PaymentCustomerStore(database: database, clock: clock), logger: logger)
        }
        return LedgerGateway(database: database, clock: clock)
    }

    static var operations: [APIOperation] { DispatchRoutes.operations + DispatchRoutes.adjustmentOperations }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        DispatchRoutes(dispatch: service, clock: clock).addRoutes(to: api)
    }
}
