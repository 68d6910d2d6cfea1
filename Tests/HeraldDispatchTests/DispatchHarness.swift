import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldPayments
import HeraldStorage
import HeraldTestSupport
import SQLKit

@testable import HeraldRealtime

/// Dispatch as its composition root builds it, on a real database, with a hub on a local bus
/// and the notification service (pushes stay planned in the outbox: no worker runs).
struct DispatchHarness: Sendable {
    static let site = GeoPoint(latitude: 37.7749, longitude: -122.4194)

    let database: any Database
    let clock: ManualClock
    let hub: RealtimeHub
    let notifications: NotificationService
    let inbox: NotificationInbox
    let dispatch: DispatchService

    init(database: any Database, clock: ManualClock = ManualClock(Timestamp.parse("2026-11-25T14:00:00Z")!)) {
        let hub = RealtimeHub(database: database, clock: clock, logger: TestDatabase.logger)
        hub.attach(bus: LocalBus(hub: hub))
        let presence = PresenceService(hub: hub, nodeID: "node_test", logger: TestDatabase.logger)
        let notifications = NotificationService(
            database: database, hub: hub, presence: presence, config: NotificationsConfig(), clock: clock, logger: TestDatabase.logger,
            pushQueued: {})
        self.database = database
        self.clock = clock
        self.hub = hub
        self.notifications = notifications
        self.inbox = NotificationInbox(service: notifications)
        self.dispatch = DispatchService(
            database: database, hub: hub, notifications: notifications, config: DispatchConfig(), clock: clock, logger: TestDatabase.logger)
    }

    /// An approved, online driver `kilometersNorth` of the site (no position when nil).
    func driver(_ id: String, kilometersNorth: Double?) async throws {
        _ = try await dispatch.drivers.saveProfile(
            id, DriverProfile(name: "Driver \(id)", phone: nil, truckType: "box_truck", vehicleDescription: nil, licensePlate: nil))
        _ = try await dispatch.drivers.setApproval(id, .approved, reason: nil, by: "ops")
        _ = try await dispatch.drivers.setOnline(id, true)
        if let kilometersNorth { try await report(id, kilometersNorth: kilometersNorth, sequence: 1) }
    }

    /// A driver `kilometersNorth` of the site (no position when nil) who may be left unapproved
    /// or offline: there, reporting, yet not for offer rounds to reach.
    func driver(_ id: String, kilometersNorth: Double?, approved: Bool, online: Bool) async throws {
        _ = try await dispatch.drivers.saveProfile(
            id, DriverProfile(name: "Driver \(id)", phone: nil, truckType: "box_truck", vehicleDescription: nil, licensePlate: nil))
        if approved { _ = try await dispatch.drivers.setApproval(id, .approved, reason: nil, by: "ops") }
        if online { _ = try await dispatch.drivers.setOnline(id, true) }
        if let kilometersNorth { try await report(id, kilometersNorth: kilometersNorth, sequence: 1) }
    }

    func report(_ id: String, kilometersNorth: Double, sequence: Int64) async throws {
        let point = GeoPoint(latitude: Self.site.latitude + kilometersNorth / 111.2, longitude: Self.site.longitude)
        let outcome = try await dispatch.drivers.reportLocation(id, LocationUpdate(point: point, accuracyMeters: 5, sequence: sequence))
        guard case .accepted = outcome else { throw HarnessError("driver \(id)'s position was not accepted: \(outcome)") }
    }

    /// Books a job at the site for `customer` (4 yd³ and one piece of furniture), for now or for `scheduledAt`.
    func book(_ customer: String = "cust", scheduledAt: Date? = nil) async throws -> JobRecord {
        var fields: [String: JSONValue] = [
            "address": "1 Market St", "lat": .number(Self.site.latitude), "lng": .number(Self.site.longitude), "volume_estimate": 4,
            "items": [["category": "furniture", "quantity": 1]],
        ]
        if let scheduledAt { fields["scheduled_at"] = .string(Timestamp.string(epochMilliseconds: scheduledAt.epochMilliseconds)) }
        let draft = try JobDraft.parse(fields, pricing: dispatch.config.pricing, now: clock.now())
        return try await dispatch.booking.create(customerID: customer, draft)
    }

    /// Books a job with an address but no coordinates for `customer` (4 yd³ and one piece of
    /// furniture): with no site to measure from, it is offered to every online driver.
    func bookWithoutSite(_ customer: String = "cust") async throws -> JobRecord {
        let fields: [String: JSONValue] = [
            "address": "1 Market St", "lat": .null, "lng": .null, "volume_estimate": 4, "items": [["category": "furniture", "quantity": 1]],
        ]
        let draft = try JobDraft.parse(fields, pricing: dispatch.config.pricing, now: clock.now())
        return try await dispatch.booking.create(customerID: customer, draft)
    }

    /// Writes the positions received since the last flush, as the running node's index sync
    /// does each interval; returns how many. Called by hand: no loop runs in the harness.
    @discardableResult
    func flushPositions() async -> Int {
        await DriverIndexSync(dispatch: dispatch, interval: .seconds(1), pullsChanges: false, ready: { true }).flush()
    }

    /// Gives a user the name and phone `PUT /me` would (the record made first, as the
    /// authentication middleware makes it on the user's first call).
    func user(_ id: String, role: Role = .customer, name: String, phone: String) async throws {
        let now = clock.now().epochMilliseconds
        try await database.withConnection { db in
            try await UserDirectory.ensure(db, id: id, role: role.rawValue, now: now)
            _ = try await UserDirectory.update(db, id: id, changes: UserChanges(displayName: name, phone: phone), now: now)
        }
    }

    /// A job booked by `customer`, claimed by `driver` (3 km away) and at the door: where a
    /// price adjustment can start.
    func arrivedJob(customer: String = "cust", driver: String = "d1") async throws -> JobRecord {
        try await self.driver(driver, kilometersNorth: 3)
        let job = try await book(customer)
        _ = try await dispatch.claims.accept(job.id, driverID: driver)
        _ = try await dispatch.steps.advance(job.id, driverID: driver, to: "en_route")
        return try await dispatch.steps.advance(job.id, driverID: driver, to: "arrived")
    }

    /// The job as it is now (an operator's read: no party's access rule in the way).
    func job(_ id: String) async throws -> JobRecord {
        try await dispatch.jobs.job(id, for: Identity(userID: "ops", role: .operator, expiresAt: .infinity)).job
    }

    /// Each driver's offer of `jobID`.
    func offers(_ jobID: String) async throws -> [String: OfferRecord] {
        Dictionary(try await dispatch.offers.records(jobID).map { ($0.driverID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The `job:status` events a room kept for `jobID` (its history, in order).
    func statusEvents(room: String, jobID: String) async throws -> [JSONValue] {
        try await events(room: room, named: "job:status").filter { $0["job_id"]?.stringValue == jobID }
    }

    /// The payloads of the `name` events a room kept, oldest first (every dispatch event is kept for replay).
    func events(room: String, named name: String) async throws -> [JSONValue] {
        let stored = try await database.withConnection { db in try await RealtimeEventStore().events(db, room: room, after: 0, limit: 1000) }
        return stored.filter { $0.event == name }.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.payload.utf8)) }
    }

    func notifications(_ user: String) async throws -> [NotificationRecord] {
        try await inbox.list(userID: user, offset: 0, limit: 50, unreadOnly: false).notifications
    }

    /// The user's notification titled `title` (on the manual clock many share a time, so the
    /// newest is not necessarily the one a test expects).
    func notification(_ user: String, title: String) async throws -> NotificationRecord? {
        try await notifications(user).first { $0.title == title }
    }

    /// The job's hold as the ledger provider has it, and its entries' operations (sorted: on
    /// the manual clock they share a time). No hold yet: `(nil, [])`.
    func ledger(_ jobID: String) async throws -> (hold: HoldState?, entries: [String]) {
        let gateway = LedgerGateway(database: database, clock: clock)
        guard let reference = try await dispatch.payments.hold(jobID)?.reference else { return (nil, []) }
        return (try await gateway.hold(reference), try await gateway.entries(reference).map(\.operation).sorted())
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
