import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// The accept: the first driver to accept a searching request makes its trip.
///
/// Why its own owner: it is the one place a request and a trip change together (the
/// request `MATCHED`, the trip opened, the other offers lost, the rider told) and the one
/// race every driver of a round runs; as in dispatch's claim, one conditional update on the
/// request's state decides. It sits above `TripBook` (it opens the trip through it).
public final class RideAccepts: Sendable {
    let database: any Database
    /// Dispatch's drivers: the accepting driver's profile and approval.
    let drivers: DriverDirectory
    let vehicles: Vehicles
    let book: TripBook
    let effects: TripEffects
    let statistics: TripStatistics
    let logger: Logger
    let store = RideRequestStore()

    init(
        database: any Database, drivers: DriverDirectory, vehicles: Vehicles, book: TripBook, effects: TripEffects, statistics: TripStatistics,
        logger: Logger
    ) {
        self.database = database
        self.drivers = drivers
        self.vehicles = vehicles
        self.book = book
        self.effects = effects
        self.statistics = statistics
        self.logger = logger
    }

    var now: Int64 { effects.now }

    /// The first driver to accept makes the trip (as in dispatch: one conditional
    /// update on the request's state decides). The winner's repeat gets the same trip; everyone
    /// else 409 `RIDE_ALREADY_ACCEPTED`. A driver already on a trip cannot take a second one
    /// (409 `DRIVER_BUSY`, also enforced by a unique index).
    public func accept(_ requestID: String, driverID: String) async throws -> TripRecord {
        guard let driver = try await drivers.profile(driverID) else {
            throw APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
        }
        guard driver.approval == .approved else {
            throw APIError(
                status: 403, code: .driverNotApproved, message: "Your driver account is \(driver.approval.rawValue); only approved drivers take rides.",
                details: ["approval_status": .string(driver.approval.rawValue)])
        }
        guard let request = try await database.withConnection({ db in try await self.store.find(db, id: requestID) }) else {
            throw TripError.requestNotFound
        }
        let plan: [RideRequestLifecycle.Effect]
        do {
            switch try await settled(request, for: driverID) {
            case .trip(let existing): return existing
            case .open(let list): plan = list
            }
        } catch {
            statistics.accepted(won: false)
            throw error
        }
        guard let vehicle = try await vehicles.vehicle(driverID) else {
            throw TripError.vehicleNotEligible("Register your vehicle first (PUT /api/v1/drivers/me/vehicle).")
        }
        guard vehicle.rideTypeList.contains(request.rideType), vehicle.capacity >= request.passengerCount else {
            throw TripError.vehicleNotEligible("Your vehicle does not serve a \(request.rideType) ride for \(request.passengerCount) passengers.")
        }
        let now = self.now
        let tripID = Identifier.make("tr", length: 16)
        let name = TripJSON.firstName(driver.name) ?? "Your driver"
        let body = "\(name) is on the way in a \(vehicle.color.lowercased()) \(vehicle.model)"
        let draft = NotificationDraft(
            userIDs: [request.riderID], type: "trip_update", title: "Driver on the way", body: body,
            data: ["trip_id": .string(tripID), "request_id": .string(requestID), "event_type": "state_changed", "new_state": "ACCEPTED"],
            collapseKey: "trip-\(tripID)")
        let result: TripRecord?
        do {
            result = try await database.unitOfWork { work -> TripRecord? in
                let db = work.db
                guard let matched = try await self.store.match(db, id: requestID, driverID: driverID, tripID: tripID, now: now) else { return nil }
                if try await self.book.activeTrip(db, driverID: driverID) != nil { throw TripError.driverBusy }
                let trip = TripRecord(id: tripID, request: matched, driverID: driverID, now: now)
                if plan.contains(.openTrip) { try await self.book.open(trip, db, now: now) }
                for case .decideOffers(let outcome) in plan {
                    try await self.store.decideOffers(db, requestID: requestID, winner: driverID, outcome: outcome)
                }
                let offered = try await self.store.offeredDrivers(db, requestID: requestID)
                // Only the winner routes the rider's notification.
                var prepared: [NotificationService.PreparedSend] = []
                if plan.contains(.notifyRider(.driverOnTheWay)) { prepared.append(try await self.effects.notifications.prepare(draft, in: db)) }
                work.afterCommit { await self.announceAccepted(trip, offered: offered, plan: plan, at: now) }
                if plan.contains(.startLiveActivity), let activities = self.effects.liveActivities,
                    try await activities.start(TripActivity.start(trip, driverName: driver.name, vehicle: vehicle, alertBody: body), in: db) > 0
                {
                    work.afterCommit { activities.wake() }
                }
                try await self.effects.write(prepared, in: work)
                return trip
            }
        } catch let error as APIError {
            throw error
        } catch {
            // Two accepts by one driver at once: the unique index refused the second trip.
            if try await book.activeTrip(driverID: driverID) != nil { throw TripError.driverBusy }
            throw error
        }
        statistics.accepted(won: result != nil)
        guard let trip = result else {
            guard let after = try await database.withConnection({ db in try await self.store.find(db, id: requestID) }) else {
                throw TripError.requestNotFound
            }
            if case .trip(let existing) = try await settled(after, for: driverID) { return existing }
            throw RideRequestLifecycle.expiredError
        }
        logger.info("ride accepted", metadata: ["request_id": "\(requestID)", "trip_id": "\(trip.id)"])
        return trip
    }

    /// After an accept commits: the parties join the trip's room and hear of it, the rider's
    /// request shows the match, the other offered drivers drop it.
    private func announceAccepted(_ trip: TripRecord, offered: [String], plan: [RideRequestLifecycle.Effect], at now: Int64) async {
        let room = RoomName.trip(trip.id)
        if plan.contains(.joinTripRoom) { await effects.addToRoom([trip.riderID, trip.driverID], room) }
        if plan.contains(.publishTripStateChanged) {
            await effects.publish("trip_state_changed", TripJSON.stateChanged(trip, previous: .requested, by: .driver, context: [:], at: now), to: room)
        }
        if plan.contains(.publishRequestUpdated) {
            let view: JSONValue
            do {
                view = try await book.tripJSON(trip, for: Identity(userID: trip.riderID, role: .customer, expiresAt: 0))
            } catch {
                logger.error("reading an accepted trip for its rider failed", metadata: ["trip_id": "\(trip.id)", "error": "\(String(reflecting: error))"])
                view = .null
            }
            await effects.publish(
                "ride_request_updated",
                ["request_id": .string(trip.requestID), "state": "MATCHED", "allowed_transitions": [], "trip_id": .string(trip.id), "trip": view],
                to: RoomName.user(trip.riderID))
        }
        for case .closeOffers(let reason) in plan {
            await effects.publish(
                batch: offered.filter { $0 != trip.driverID }.map {
                    ("ride:closed", ["request_id": .string(trip.requestID), "reason": .string(reason)], TripEffects.driverRoom($0))
                })
        }
        if plan.contains(.announceTrip) { await effects.announce(trip) }
    }

    /// Where a request stands for an accepting driver (`RideRequestLifecycle`'s accept).
    enum Standing: Sendable {
        /// The request is this driver's already: their trip.
        case trip(TripRecord)
        /// Still searching: the accept may try, with these effects.
        case open([RideRequestLifecycle.Effect])
    }

    /// The answer for a request that is no longer searching (a refusal is thrown), or the
    /// accept's effects while it can be accepted.
    func settled(_ request: RideRequestRecord, for driverID: String) async throws -> Standing {
        switch RideRequestLifecycle.decide(.init(request), .accept(driverID: driverID, now: now)) {
        case .refused(let refusal):
            throw refusal.error
        case .deferToTrip(let tripID):
            guard let tripID, let trip = try await book.find(tripID) else { throw TripError.alreadyAccepted }
            return .trip(trip)
        case .changed(_, let list):
            return .open(list)
        case .unchanged:
            // Never for an accept; as a request that cannot be taken.
            throw TripError.alreadyAccepted
        }
    }
}
