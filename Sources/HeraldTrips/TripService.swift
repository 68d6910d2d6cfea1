import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Ride requests, trips and live tracking.
///
/// Why it reuses dispatch rather than copying it: drivers, their approval and their live
/// positions (the spatial index) are dispatch's; a ride request asks the same index for
/// nearby drivers and offers itself the same way (socket + push, rounds that widen). The
/// accept, every state change and its notifications commit in one transaction; socket
/// events follow the commit and never undo it.
public final class TripService: Sendable {
    public let database: any Database
    public let config: TripsConfig
    public let dispatch: DispatchService
    public let tracker: TripTracker
    public let writer: TripLocationWriter
    /// Requests, offers, accepts and fraud flags of this node, for `/metrics`.
    public let statistics = TripStatistics()
    let hub: RealtimeHub
    let notifications: NotificationService
    /// Starts, updates and ends riders' Live Activities (nil: none are kept).
    public let liveActivities: LiveActivityService?
    let clock: any HeraldClock
    let logger: Logger
    let requests = RideRequestStore()
    let trips = TripStore()
    let vehicles = VehicleStore()
    let trail = TripLocationStore()
    let surge: SurgePricing
    /// Wakes the ride scheduler (a round or an expiry is due sooner than its next poll).
    let scheduleChanged = WakeSignal()

    public init(
        database: any Database, hub: RealtimeHub, notifications: NotificationService, dispatch: DispatchService, config: TripsConfig,
        clock: any HeraldClock, logger: Logger, liveActivities: LiveActivityService? = nil, schemaReady: StartupGate = StartupGate(open: true)
    ) {
        self.liveActivities = liveActivities
        self.database = database
        self.hub = hub
        self.notifications = notifications
        self.dispatch = dispatch
        self.config = config
        self.clock = clock
        self.logger = logger
        self.surge = SurgePricing(config: config.surge)
        let store = TripStore()
        self.tracker = TripTracker(config: config) { driverID in
            try await database.withConnection { db in
                let trip = try await store.activeTrip(db, driverID: driverID)
                return (trip, try await dispatch.hasActiveJob(db, userID: driverID))
            }
        }
        self.writer = TripLocationWriter(hub: hub, database: database, logger: logger, schemaReady: schemaReady)
        hub.join(tracker, room: TripTracker.announcementRoom)
    }

    /// The trips module's source of trip activities (registered in the composition root).
    public var liveActivitySource: any LiveActivitySource { TripActivitySource(service: self) }
    static func driverRoom(_ id: String) -> String { "driver:\(id)" }

    var now: Int64 { clock.now().epochMilliseconds }

    // MARK: After commits

    func publish(_ event: String, _ payload: JSONValue, to room: String, persist: Bool = true) async {
        do {
            try await hub.publish(event, payload: payload, to: room, persist: persist)
        } catch {
            logger.error("publishing a trip event failed", metadata: ["event": "\(event)", "room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    func publish(batch events: [(name: String, payload: JSONValue, room: String)]) async {
        do {
            try await hub.publish(batch: events)
        } catch {
            logger.error("publishing trip events failed", metadata: ["events": "\(events.count)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Tells every node's tracker (and this one at once) about a trip's new state.
    func announce(_ trip: TripRecord) async {
        let snapshot = TripTracker.TripSnapshot(trip)
        tracker.apply(snapshot, at: now)
        await publish("trip", snapshot.json, to: TripTracker.announcementRoom, persist: false)
    }

    func addToRoom(_ users: [String], _ room: String) async {
        do {
            try await hub.addUsers(users, to: room)
        } catch {
            logger.error("joining users to a trip room failed", metadata: ["room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    func prepare(_ draft: NotificationDraft) async -> NotificationService.PreparedSend? {
        do {
            return try await notifications.prepare(draft)
        } catch {
            logger.error("preparing a trip notification failed", metadata: ["type": "\(draft.type)", "error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// Writes prepared notifications in `work`, delivered after its commit.
    func write(_ prepared: [NotificationService.PreparedSend], in work: UnitOfWork) async throws {
        try await notifications.write(prepared, in: work)
    }

    // MARK: Vehicles

    public func vehicle(_ driverID: String) async throws -> VehicleRecord? {
        try await database.withConnection { db in try await self.vehicles.find(db, driverID: driverID) }
    }

    public func saveVehicle(_ driverID: String, _ input: VehicleInput) async throws -> VehicleRecord {
        guard try await dispatch.drivers.profile(driverID) != nil else {
            throw APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
        }
        let now = self.now
        let record = VehicleRecord(
            driverID: driverID, make: input.make, model: input.model, color: input.color, licensePlate: input.licensePlate,
            capacity: input.capacity, rideTypes: input.rideTypes.joined(separator: ","), createdAt: now, updatedAt: now)
        return try await database.transaction { db in try await self.vehicles.upsert(db, record) }
    }

    // MARK: Reads

    /// The trip when `identity` is its rider, its driver or an operator; 404 otherwise (a
    /// stranger learns nothing, not even that it exists).
    public func trip(_ id: String, for identity: Identity) async throws -> TripRecord {
        guard let trip = try await database.withConnection({ db in try await self.trips.find(db, id: id) }), Self.mayRead(trip, identity) else {
            throw TripError.tripNotFound
        }
        return trip
    }

    static func mayRead(_ trip: TripRecord, _ identity: Identity) -> Bool {
        identity.role == .operator || identity.role == .service || trip.riderID == identity.userID || trip.driverID == identity.userID
    }

    /// The trip's full JSON for `identity`.
    public func tripJSON(_ trip: TripRecord, for identity: Identity) async throws -> JSONValue {
        let (user, riderRating, driver, vehicle) = try await database.withConnection { db in
            (
                try await UserDirectory.find(db, id: trip.riderID), try await self.trips.riderRating(db, riderID: trip.riderID),
                try await self.dispatch.drivers.record(db, userID: trip.driverID), try await self.vehicles.find(db, driverID: trip.driverID)
            )
        }
        return TripJSON.trip(
            trip, rider: (user?.displayName, riderRating), driver: driver, vehicle: vehicle,
            forOperator: identity.role == .operator || identity.role == .service)
    }

    /// The audit trail: the driver and operators see every sample in full, the rider the
    /// shared ones.
    public func locations(_ id: String, for identity: Identity, after: Int64, limit: Int) async throws -> (rows: [TripLocationRow], full: Bool) {
        let trip = try await trip(id, for: identity)
        let full = trip.riderID != identity.userID || identity.role == .operator
        var rows = try await database.withConnection { db in try await self.trail.list(db, tripID: id, afterOrdinal: after, limit: full ? limit : limit * 4) }
        if !full { rows = Array(rows.filter { $0.shared != 0 }.prefix(limit)) }
        return (rows, full)
    }

    /// A request as a driver it was offered to sees it (the driver who opens the app from
    /// the offer's push has its id and nothing else); `RIDE_REQUEST_NOT_FOUND` for a driver
    /// it was never offered to.
    public func offeredRequest(_ id: String, driverID: String) async throws -> (RideRequestRecord, RideOfferRecord) {
        let found = try await database.withConnection { db -> (RideRequestRecord, RideOfferRecord)? in
            guard let offer = try await self.requests.offer(db, requestID: id, driverID: driverID),
                let request = try await self.requests.find(db, id: id)
            else { return nil }
            return (request, offer)
        }
        guard let found else { throw TripError.requestNotFound }
        return found
    }

    /// The requests offered to a driver that they may still accept, newest first.
    public func openOffers(driverID: String) async throws -> [(RideRequestRecord, RideOfferRecord)] {
        let now = now
        return try await database.withConnection { db in try await self.requests.openOffers(db, driverID: driverID, now: now, limit: 50) }
    }

    public func request(_ id: String, for identity: Identity) async throws -> RideRequestRecord {
        guard let request = try await database.withConnection({ db in try await self.requests.find(db, id: id) }),
            request.riderID == identity.userID || identity.role == .operator || identity.role == .service
        else { throw TripError.requestNotFound }
        return request
    }

    /// The caller's trips, newest first: a rider's rides, a driver's drives, everyone's for
    /// operators. An app that lost its trip id finds its live trip here (or in `state_sync`).
    public func history(for identity: Identity, state: TripState?, offset: Int, limit: Int) async throws -> (trips: [TripRecord], total: Int) {
        let party: TripStore.Party =
            switch identity.role {
            case .operator, .service: .anyone
            case .driver: .driver(identity.userID)
            case .customer: .rider(identity.userID)
            }
        return try await database.withConnection { db in try await self.trips.history(db, of: party, state: state, offset: offset, limit: limit) }
    }

    /// The caller's ride requests, newest first (everyone's for operators).
    public func requestHistory(for identity: Identity, offset: Int, limit: Int) async throws -> (requests: [RideRequestRecord], total: Int) {
        let rider = identity.role == .operator || identity.role == .service ? nil : identity.userID
        return try await database.withConnection { db in try await self.requests.history(db, riderID: rider, offset: offset, limit: limit) }
    }

    /// Trips not over that the user rides or drives (their sockets follow these rooms).
    public func activeTripIDs(_ userID: String) async throws -> [String] {
        try await database.withConnection { db in try await self.trips.activeTripIDs(db, userID: userID) }
    }

    /// The domain part of `state_sync` for `trip:{id}`: the state, and the latest driver
    /// location always (even when the event history was trimmed).
    public func stateSync(_ identity: Identity, channel: String, clientState: JSONValue?) async throws -> [String: JSONValue] {
        let id = String(channel.dropFirst("trip:".count))
        let (found, latest) = try await database.withConnection { db in
            (try await self.trips.find(db, id: id), try await self.trail.latestShared(db, tripID: id))
        }
        guard let trip = found, Self.mayRead(trip, identity) else {
            return ["current_state": .null, "error": ["code": .string(ErrorCode.tripNotFound.rawValue), "message": "No such trip."]]
        }
        var result: [String: JSONValue] = [
            "trip_id": .string(trip.id), "current_state": .string(trip.state.rawValue),
            "allowed_transitions": .array(trip.state.allowedTransitions.map { .string($0.rawValue) }),
            "etag": .string("trip-v\(trip.version)"),
        ]
        result["latest_driver_location"] = latest.map { TripJSON.latestLocation($0, now: now) } ?? .null
        if let client = clientState?.stringValue {
            // A client that believed another state refetches the trip over REST.
            result["client_state"] = .string(client)
            result["stale_client"] = .bool(client != trip.state.rawValue)
        }
        return result
    }
}
