import Foundation
import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging

/// Ride requests, trips and live tracking: the trips module's composition root.
///
/// Why it reuses dispatch rather than copying it: drivers, their approval and their live
/// positions (the spatial index) are dispatch's; a ride request asks the same index for
/// nearby drivers and offers itself the same way (socket + push, rounds that widen). The
/// accept, every state change and its notifications commit in one transaction; socket
/// events follow the commit and never undo it.
///
/// Why a root and not a façade (issue 42, part 1): each concern is an owner with its store,
/// and callers use the owner. They are built bottom-up, each calling only the ones built
/// before it: `vehicles` and `trail`; `rounds` (the request's offer rounds); `book` (trips,
/// whose driver's cancel searches again through `rounds`); `requests` (the rider's side, whose
/// matched cancel goes to `book`) and `accepts` (which open trips in `book`); `locations`
/// (the location stream, which flags trips in `book`).
public final class TripService: Sendable {
    public let database: any Database
    public let config: TripsConfig
    public let dispatch: DispatchService
    public let tracker: TripTracker
    public let writer: TripLocationWriter
    /// Requests, offers, accepts and fraud flags of this node, for `/metrics`.
    public let statistics: TripStatistics
    /// Starts, updates and ends riders' Live Activities (nil: none are kept).
    public let liveActivities: LiveActivityService?
    let logger: Logger

    /// Drivers' vehicles, and which nearby drivers' cars serve a ride.
    public let vehicles: Vehicles
    /// A trip's location audit trail as its parties and its fare read it.
    public let trail: TripTrail
    /// Searching requests' offer rounds and expiries, and the ride scheduler.
    public let rounds: RideOfferRounds
    /// Trips: reads, state changes, ratings.
    public let book: TripBook
    /// Riders' ride requests: quotes, bookings, cancels, reads.
    public let requests: RideRequests
    /// The accept that makes a trip.
    public let accepts: RideAccepts
    /// Dispatch's location observer for trips (installed by the server's trips module).
    public let locations: TripLocationStream

    public init(
        database: any Database, hub: RealtimeHub, notifications: NotificationService, dispatch: DispatchService, config: TripsConfig,
        clock: any HeraldClock, logger: Logger, liveActivities: LiveActivityService? = nil, schemaReady: StartupGate = StartupGate(open: true)
    ) {
        let store = TripStore()
        let tracker = TripTracker(config: config) { driverID in
            try await database.withConnection { db in
                let trip = try await store.activeTrip(db, driverID: driverID)
                return (trip, try await dispatch.hasActiveJob(db, userID: driverID))
            }
        }
        let writer = TripLocationWriter(hub: hub, database: database, logger: logger, schemaReady: schemaReady)
        hub.join(tracker, room: TripTracker.announcementRoom)
        let statistics = TripStatistics()
        let effects = TripEffects(hub: hub, notifications: notifications, liveActivities: liveActivities, tracker: tracker, clock: clock, logger: logger)
        let drivers = dispatch.drivers
        let vehicles = Vehicles(database: database, drivers: drivers, clock: clock)
        let trail = TripTrail(database: database, config: config)
        let rounds = RideOfferRounds(database: database, config: config, vehicles: vehicles, effects: effects, statistics: statistics, logger: logger)
        let book = TripBook(
            database: database, drivers: drivers, dispatchConfig: dispatch.config, vehicles: vehicles, trail: trail, rounds: rounds,
            writer: writer, effects: effects, logger: logger)
        self.database = database
        self.config = config
        self.dispatch = dispatch
        self.tracker = tracker
        self.writer = writer
        self.statistics = statistics
        self.liveActivities = liveActivities
        self.logger = logger
        self.vehicles = vehicles
        self.trail = trail
        self.rounds = rounds
        self.book = book
        self.requests = RideRequests(
            database: database, config: config, drivers: drivers, vehicles: vehicles, rounds: rounds, book: book, effects: effects, statistics: statistics)
        self.accepts = RideAccepts(
            database: database, drivers: drivers, vehicles: vehicles, book: book, effects: effects, statistics: statistics, logger: logger)
        self.locations = TripLocationStream(tracker: tracker, writer: writer, book: book, effects: effects, statistics: statistics, logger: logger)
    }

    /// The trips module's source of trip activities (registered in the composition root).
    public var liveActivitySource: any LiveActivitySource {
        TripActivitySource(database: database, book: book, drivers: dispatch.drivers, vehicles: vehicles)
    }
}
