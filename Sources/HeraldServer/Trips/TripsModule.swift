import HeraldCore
import HeraldStorage
import HeraldTrips
import Hummingbird
import Logging
import ServiceLifecycle

/// The trips module as the server runs it: the service (which observes dispatch's driver
/// locations), its socket events and channel rules, the ride scheduler, the location writer
/// and the routes.
public struct TripsModule: Sendable {
    public let service: TripService
    let services: [any Service]
    let clock: any HeraldClock

    init(config: HeraldConfig, database: any Database, realtime: RealtimeGateway, notifications: NotificationModule, dispatch: DispatchModule, clock: any HeraldClock, logger: Logger) {
        let service = TripService(
            database: database, hub: realtime.hub, notifications: notifications.service, dispatch: dispatch.service, config: config.trips,
            clock: clock, logger: logger)
        dispatch.service.observeLocations(service)
        TripSocketEvents(trips: service).install(socketIO: realtime.socketIO, native: realtime.native, channels: realtime.channels)
        let hub = realtime.hub
        self.service = service
        self.services = [service.rideScheduler(ready: { await hub.waitUntilReady() }), service.writer]
        self.clock = clock
    }

    static var operations: [APIOperation] { TripRoutes.operations }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>, rateLimits: RateLimitGate) {
        TripRoutes(trips: service, clock: clock, rateLimits: rateLimits).addRoutes(to: api)
    }
}
