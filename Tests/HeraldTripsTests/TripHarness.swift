import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldStorage
import HeraldTestSupport
import SQLKit

@testable import HeraldRealtime
@testable import HeraldTrips

/// The trips module as the server's `TripsModule` builds it, on a real database, with dispatch under it, a hub on a local bus and
/// notifications (pushes stay in the outbox). No scheduler or writer runs: tests call `rounds.runDue()`; `events(_:)` flushes the writer.
struct TripHarness: Sendable {
    /// The server tests' clock start (`TripFlowTests.start`).
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let pickup = Place(
        point: GeoPoint(latitude: 37.7749, longitude: -122.4194), address: "123 Market St, San Francisco", placeID: "pl_abc123")
    static let dropoff = Place(point: GeoPoint(latitude: 37.8044, longitude: -122.2712), address: "456 Broadway, Oakland", placeID: "pl_def456")
    /// The ride the server tests book: two riders, a standard car, across the bay.
    static let ride = RideRequestInput(pickup: pickup, dropoff: dropoff, rideType: "STANDARD", passengerCount: 2, paymentMethodID: "pm_xyz")

    let database: any Database
    let clock: ManualClock
    let hub: RealtimeHub
    let notifications: NotificationService
    let inbox: NotificationInbox
    let dispatch: DispatchService
    let trips: TripService

    init(database: any Database, clock: ManualClock = ManualClock(TripHarness.start), config: TripsConfig = TripsConfig()) {
        let hub = RealtimeHub(database: database, clock: clock, logger: TestDatabase.logger)
        hub.attach(bus: LocalBus(hub: hub))
        let presence = PresenceService(hub: hub, nodeID: "node_test", logger: TestDatabase.logger)
        let notifications = NotificationService(
            database: database, hub: hub, presence: presence, config: NotificationsConfig(), clock: clock, logger: TestDatabase.logger,
            pushQueued: {})
        let dispatch = DispatchService(
            database: database, hub: hub, notifications: notifications, config: DispatchConfig(), clock: clock, logger: TestDatabase.logger)
        let trips = TripService(
            database: database, hub: hub, notifications: notifications, dispatch: dispatch, config: config, clock: clock, logger: TestDatabase.logger)
        // As the trips module does: every position report of a driver on a trip goes through the trip's stream.
        dispatch.drivers.observeLocations(trips.locations)
        self.database = database
        self.clock = clock
        self.hub = hub
        self.notifications = notifications
        self.inbox = NotificationInbox(service: notifications)
        self.dispatch = dispatch
        self.trips = trips
    }

    /// The caller as their token would name them.
    static func identity(_ userID: String, _ role: Role = .customer) -> Identity {
        Identity(userID: userID, role: role, expiresAt: .infinity)
    }

    /// A point `meters` north of the pickup (south when negative).
    static func north(_ meters: Double) -> GeoPoint {
        GeoPoint(latitude: pickup.point.latitude + meters / 111_200, longitude: pickup.point.longitude)
    }

    /// An approved, online driver with a silver Camry for standard rides, `metersNorth` of the
    /// pickup (their first report, sequence 1).
    func driver(_ id: String, metersNorth: Double, name: String = "Alex Smith") async throws {
        _ = try await dispatch.drivers.saveProfile(
            id,
            DriverProfile(
                name: name, phone: nil, truckType: "sedan", vehicleDescription: nil, licensePlate: nil,
                photoURL: "https://cdn.example.com/drivers/\(id).jpg"))
        _ = try await dispatch.drivers.setApproval(id, .approved, reason: nil, by: "ops")
        _ = try await dispatch.drivers.setOnline(id, true)
        _ = try await trips.vehicles.save(
            id, VehicleInput(make: "Toyota", model: "Camry", color: "Silver", licensePlate: "ABC123", capacity: 4, rideTypes: ["STANDARD"]))
        let outcome = try await report(id, metersNorth: metersNorth, sequence: 1)
        guard outcome == .accepted else { throw TripHarnessError("driver \(id)'s position was not accepted: \(outcome)") }
    }

    @discardableResult
    func report(_ id: String, _ update: LocationUpdate) async throws -> DriverTracker.LocationOutcome {
        try await dispatch.drivers.reportLocation(id, update)
    }

    /// A 5 m accurate report `metersNorth` of the pickup.
    @discardableResult
    func report(_ id: String, metersNorth: Double, sequence: Int64?, speedMps: Double? = nil) async throws -> DriverTracker.LocationOutcome {
        try await report(id, LocationUpdate(point: Self.north(metersNorth), accuracyMeters: 5, speedMps: speedMps, sequence: sequence))
    }

    /// Books `input` for `rider` (its first round runs at once).
    func book(_ rider: String, _ input: RideRequestInput = TripHarness.ride) async throws -> RideRequestRecord {
        try await trips.requests.createRequest(input, riderID: rider).0
    }

    /// The rider's booking, accepted by `driver`.
    func acceptedTrip(driver: String, rider: String = "rider") async throws -> TripRecord {
        let request = try await book(rider)
        return try await trips.accepts.accept(request.id, driverID: driver)
    }

    /// What a room kept (its history, in order); what the location writer holds is flushed
    /// first, as its service would within half a second.
    func events(_ room: String) async throws -> [(name: String, payload: JSONValue)] {
        _ = await trips.writer.flushOnce()
        return try await database.withConnection { db in try await RealtimeEventStore().events(db, room: room, after: 0, limit: 10_000) }
            .map { ($0.event, (try? JSONDecoder().decode(JSONValue.self, from: Data($0.payload.utf8))) ?? .null) }
    }

    /// The user's inbox, newest first (silent notifications are never in it).
    func notifications(_ user: String) async throws -> [NotificationRecord] {
        try await inbox.list(userID: user, offset: 0, limit: 100, unreadOnly: false).notifications
    }

    /// How many silent (content-available) notifications of `type` the user was sent.
    func silentNotifications(_ user: String, type: String) async throws -> Int {
        try await database.withConnection { db in
            try await db.raw("SELECT COUNT(*) AS n FROM notifications WHERE user_id = \(bind: user) AND silent = 1 AND type = \(bind: type)")
                .first()?.decode(column: "n", as: Int.self) ?? 0
        }
    }
}

struct TripHarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
