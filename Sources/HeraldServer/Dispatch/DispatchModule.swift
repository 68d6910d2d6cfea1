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

    init(config: HeraldConfig, database: any Database, realtime: RealtimeGateway, notifications: NotificationModule, clock: any HeraldClock, logger: Logger) {
        let service = DispatchService(
            database: database, hub: realtime.hub, notifications: notifications.service, config: config.dispatch, clock: clock, logger: logger,
            payments: config.payments, gateway: Self.gateway(config.payments, database: database, clock: clock, logger: logger))
        DispatchSocketEvents(dispatch: service).install(socketIO: realtime.socketIO, native: realtime.native, channels: realtime.channels)
        let hub = realtime.hub
        let ready: @Sendable () async -> Bool = { await hub.waitUntilReady() }
        let sync = DriverIndexSync(
            dispatch: service, interval: .milliseconds(config.dispatch.indexSyncIntervalMs), pullsChanges: database.engine == .postgres, ready: ready)
        self.service = service
        self.indexSync = sync
        self.services = [service.offerScheduler(ready: ready), service.adjustmentScheduler(ready: ready), sync]
        self.clock = clock
    }

    /// The configured payment provider (`payments.provider`; validated at start).
    static func gateway(_ config: PaymentsConfig, database: any Database, clock: any HeraldClock, logger: Logger) -> any PaymentGateway {
        if config.provider == "stripe", let key = config.stripe.secretKey {
            return StripeGateway(
                baseURL: config.stripe.baseURL, secretKey: key, apiVersion: config.stripe.apiVersion, timeout: .seconds(config.stripe.timeoutSeconds),
                logger: logger)
        }
        return LedgerGateway(database: database, clock: clock)
    }

    static var operations: [APIOperation] { DispatchRoutes.operations + DispatchRoutes.adjustmentOperations }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        DispatchRoutes(dispatch: service, clock: clock).addRoutes(to: api)
    }
}
