import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldStorage
import Logging
import SQLKit

/// Trips: who may read one and how it reads, the trip an accept opens, its state changes
/// (`TripBook+Transitions.swift`), ratings and fraud flags.
///
/// Why its own owner: a trip is read and changed by its parties (REST, sockets, `state_sync`),
/// made by the accept and flagged by the location stream; all of them go through here, which
/// owns `TripStore` (`trips`, `trip_events`, `rider_ratings`). It calls down to the trail, the
/// vehicles and the request rounds (a driver's cancel searches again), never up.
public final class TripBook: Sendable {
    let database: any Database
    /// Dispatch's drivers: names and ratings on the trip, the position that confirms an arrival.
    let drivers: DriverDirectory
    /// How fresh that position must be (dispatch's `location_max_age_seconds`).
    let dispatchConfig: DispatchConfig
    let vehicles: Vehicles
    let trail: TripTrail
    let rounds: RideOfferRounds
    let writer: TripLocationWriter
    let effects: TripEffects
    let logger: Logger
    let store = TripStore()

    init(
        database: any Database, drivers: DriverDirectory, dispatchConfig: DispatchConfig, vehicles: Vehicles, trail: TripTrail,
        rounds: RideOfferRounds, writer: TripLocationWriter, effects: TripEffects, logger: Logger
    ) {
        self.database = database
        self.drivers = drivers
        self.dispatchConfig = dispatchConfig
        self.vehicles = vehicles
        self.trail = trail
        self.rounds = rounds
        self.writer = writer
        self.effects = effects
        self.logger = logger
    }

    var now: Int64 { effects.now }

    // MARK: Reads

    /// The trip when `identity` is its rider, its driver or an operator; 404 otherwise (a
    /// stranger learns nothing, not even that it exists).
    public func trip(_ id: String, for identity: Identity) async throws -> TripRecord {
        guard let trip = try await database.withConnection({ db in try await self.store.find(db, id: id) }), Self.mayRead(trip, identity) else {
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
                try await UserDirectory.find(db, id: trip.riderID), try await self.store.riderRating(db, riderID: trip.riderID),
                try await self.drivers.record(db, userID: trip.driverID), try await self.vehicles.find(db, driverID: trip.driverID)
            )
        }
        return TripJSON.trip(
            trip, rider: (user?.displayName, riderRating), driver: driver, vehicle: vehicle,
            forOperator: identity.role == .operator || identity.role == .service)
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
        return try await database.withConnection { db in try await self.store.history(db, of: party, state: state, offset: offset, limit: limit) }
    }

    /// Trips not over that the user rides or drives (their sockets follow these rooms).
    public func activeTripIDs(_ userID: String) async throws -> [String] {
        try await database.withConnection { db in try await self.store.activeTripIDs(db, userID: userID) }
    }

    /// The domain part of `state_sync` for `trip:{id}`: the state, and the latest driver
    /// location always (even when the event history was trimmed).
    public func stateSync(_ identity: Identity, channel: String, clientState: JSONValue?) async throws -> [String: JSONValue] {
        let id = String(channel.dropFirst("trip:".count))
        let (found, latest) = try await database.withConnection { db in
            (try await self.store.find(db, id: id), try await self.trail.latestShared(db, tripID: id))
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

    // MARK: For the accept and the location stream

    func find(_ id: String) async throws -> TripRecord? {
        try await database.withConnection { db in try await self.find(db, id: id) }
    }

    func find(_ db: any SQLDatabase, id: String) async throws -> TripRecord? {
        try await store.find(db, id: id)
    }

    /// The trip the driver is committed to now, if any (in the caller's transaction, or alone).
    func activeTrip(_ db: any SQLDatabase, driverID: String) async throws -> TripRecord? {
        try await store.activeTrip(db, driverID: driverID)
    }

    func activeTrip(driverID: String) async throws -> TripRecord? {
        try await database.withConnection { db in try await self.store.activeTrip(db, driverID: driverID) }
    }

    /// Opens the trip an accept made, in the accept's transaction: `REQUESTED → ACCEPTED`
    /// by its driver.
    func open(_ trip: TripRecord, _ db: any SQLDatabase, now: Int64) async throws {
        try await store.insert(db, trip)
        try await store.recordEvent(db, tripID: trip.id, from: .requested, to: .accepted, by: .driver, actorID: trip.driverID, context: "{}", now: now)
    }

    /// Counts fraud warnings on the trip for operators, in one transaction.
    func flag(_ tripID: String, codes: [String]) async throws {
        let now = self.now
        try await database.transaction { db in
            for code in codes { try await self.store.flag(db, id: tripID, code: code, now: now) }
        }
    }

    // MARK: Ratings

    /// `POST /trips/{id}/rating`: the rider rates the driver, or the driver the rider, once,
    /// after COMPLETED; the rating joins the other side's average. The same rating again (a
    /// retried request) answers with the trip; a different one is 409 `TRIP_ALREADY_RATED`.
    public func rate(_ tripID: String, by identity: Identity, rating: Int, comment: String?) async throws -> TripRecord {
        let trip = try await trip(tripID, for: identity)
        let byRider: Bool
        if identity.userID == trip.riderID {
            byRider = true
        } else if identity.userID == trip.driverID {
            byRider = false
        } else {
            throw TripError.notAParty
        }
        guard trip.state == .completed else { throw TripError.notCompleted }
        let now = self.now
        let rated = try await database.transaction { db -> TripRecord? in
            guard let updated = try await self.store.rate(db, id: tripID, byRider: byRider, rating: rating, comment: comment, now: now) else { return nil }
            if byRider {
                try await self.drivers.addRating(db, driverID: trip.driverID, rating: rating)
            } else {
                try await self.store.addRiderRating(db, riderID: trip.riderID, rating: rating)
            }
            return updated
        }
        if let rated { return rated }
        let fresh = try await self.trip(tripID, for: identity)
        let (given, said) = byRider ? (fresh.riderRating, fresh.riderComment) : (fresh.driverRating, fresh.driverComment)
        if given == rating && said == comment { return fresh }
        throw TripError.alreadyRated
    }
}
