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

    init(
        config: HeraldConfig, database: any Database, realtime: RealtimeGateway, notifications: NotificationModule, dispatch: DispatchModule,
        schemaReady: StartupGate, clock: any HeraldClock, logger: Logger
    ) {
        let service = TripService(
            database: database, hub: realtime.hub, notifications: notifications.service, dispatch: dispatch.service, config: config.trips,
            clock: clock, logger: logger, liveActivities: notifications.liveActivities, schemaReady: schemaReady)
        dispatch.service.drivers.observeLocations(service.locations)
        notifications.liveActivities.setSource(service.liveActivitySource, for: .trip)
        TripSocketEvents(trips: service).install(socketIO: realtime.socketIO, native: realtime.native, channels: realtime.channels)
        self.service = service
        self.services = [service.rounds.scheduler(ready: { await schemaReady.wait() }), service.writer]
        self.clock = clock
    }

    static var operations: [APIOperation] { TripRoutes.operations }

    /// Ride requests, offers, accepts and fraud flags on this node, in Prometheus text format.
    func renderMetrics() -> String {
        let s = service.statistics.snapshot
        var text = "# HELP herald_trips_ride_requests_total Ride requests booked.\n# TYPE herald_trips_ride_requests_total counter\n"
        text += "herald_trips_ride_requests_total \(s.requests)\n"
        text += "# HELP herald_trips_ride_offers_total Drivers offered a ride (one per driver per round).\n# TYPE herald_trips_ride_offers_total counter\n"
        text += "herald_trips_ride_offers_total \(s.rideOffers)\n"
        text += s.accepts.render("herald_trips_ride_accepts_total", help: "Ride accepts by outcome.", label: "outcome", labels: ["won", "lost"])
        text += s.requestsUnmatched.render(
            "herald_trips_ride_requests_unmatched_total", help: "Ride requests that ended without a driver.", label: "reason", labels: ["expired", "cancelled"])
        text += s.flags.render("herald_trips_fraud_flags_total", help: "Fraud warnings raised on trips, by code.", label: "code", labels: [])
        return text
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>, rateLimits: RateLimitGate) {
        TripRoutes(trips: service, clock: clock, rateLimits: rateLimits).addRoutes(to: api)
    }
}
