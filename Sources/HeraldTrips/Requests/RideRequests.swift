import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldRealtime
import HeraldStorage
import SQLKit

/// Riders' ride requests: the quote, the booking (priced, its first round run at once), the
/// rider's cancel, and the reads of riders, operators and the drivers offered a request.
///
/// Why its own owner: this is the rider's side of a request, from the quote to the end of the
/// search; the rounds (`RideOfferRounds`) and the accept (`RideAccepts`) are the drivers'.
/// A matched request's cancel is its trip's, so it calls `TripBook` (never the reverse).
public final class RideRequests: Sendable {
    let database: any Database
    let config: TripsConfig
    /// Dispatch's drivers: the spatial index the surge counts free drivers in.
    let drivers: DriverDirectory
    let vehicles: Vehicles
    let rounds: RideOfferRounds
    let book: TripBook
    let effects: TripEffects
    let statistics: TripStatistics
    let surge: SurgePricing
    let store = RideRequestStore()

    init(
        database: any Database, config: TripsConfig, drivers: DriverDirectory, vehicles: Vehicles, rounds: RideOfferRounds, book: TripBook,
        effects: TripEffects, statistics: TripStatistics
    ) {
        self.database = database
        self.config = config
        self.drivers = drivers
        self.vehicles = vehicles
        self.rounds = rounds
        self.book = book
        self.effects = effects
        self.statistics = statistics
        self.surge = SurgePricing(config: config.surge)
    }

    var now: Int64 { effects.now }

    /// A quote: the route, the fare range at the current surge, and how soon a driver could
    /// be there.
    public struct Quote: Sendable {
        public var route: RouteEstimate
        public var estimate: FareModel.Estimate
        public var cell: String
        public var estimatedPickupSeconds: Int?
        public var currency: String

        public var fareJSON: JSONValue {
            TripJSON.fareEstimate(min: estimate.minMinor, max: estimate.maxMinor, currency: currency, surge: estimate.surgeMultiplier)
        }
    }

    /// A booking as its transaction commits it (the answer an idempotent request's slot gets).
    public struct BookedRequest: Sendable {
        public let record: RideRequestRecord
        public let quote: Quote

        public init(record: RideRequestRecord, quote: Quote) {
            self.record = record
            self.quote = quote
        }
    }

    public func quote(_ input: RideRequestInput, riderID: String) async throws -> Quote {
        let route = RouteEstimate(from: input.pickup.point, to: input.dropoff.point, detourFactor: config.routeDetourFactor, speedMps: config.averageSpeedMps)
        let cell = surge.cell(latitude: input.pickup.point.latitude, longitude: input.pickup.point.longitude)
        let now = self.now
        let open = try await database.withConnection { db in try await self.store.openCount(db, cell: cell, now: now) }
        let nearby = try await vehicles.candidates(
            near: input.pickup.point, radius: config.surge.cellSizeMeters * 1.5, rideType: input.rideType, passengers: input.passengerCount,
            excluding: [riderID])
        let inCell = nearby.filter { match in
            guard let position = drivers.tracker.index.position(of: match.driverID)?.point else { return false }
            return surge.cell(latitude: position.latitude, longitude: position.longitude) == cell
        }
        let multiplier = surge.multiplier(openRequests: open + 1, freeDrivers: inCell.count)
        let rates = config.rideTypes[input.rideType] ?? RideTypeConfig()
        let estimate = FareModel(rates: rates, trafficFactor: config.trafficFactor)
            .estimate(distanceMeters: route.distanceMeters, durationSeconds: route.durationSeconds, surge: multiplier)
        let pickupSeconds = nearby.first.map { Int(($0.distanceMeters * config.routeDetourFactor / config.averageSpeedMps).rounded()) }
        return Quote(route: route, estimate: estimate, cell: cell, estimatedPickupSeconds: pickupSeconds, currency: config.currency)
    }

    /// Books a ride: SEARCHING, priced, offered at once to the nearest drivers.
    ///
    /// A surge the rider did not confirm (`surge_multiplier` in the body, as quoted) is 409
    /// `SURGE_CHANGED` with the new estimate; nothing is booked. `answer` (an idempotent
    /// request's slot) gets the booking in its transaction.
    public func createRequest(_ input: RideRequestInput, riderID: String, answer: TransactionAnswer? = nil) async throws -> (RideRequestRecord, Quote) {
        let quote = try await quote(input, riderID: riderID)
        let current = quote.estimate.surgeMultiplier
        if SurgePricing.changed(input.confirmedSurge ?? 1.0, current) {
            throw TripError.surgeChanged(quote.fareJSON, multiplier: current)
        }
        let now = self.now
        let record = RideRequestRecord(
            id: Identifier.make("req", length: 16), riderID: riderID, state: .searching,
            pickupLatitude: input.pickup.point.latitude, pickupLongitude: input.pickup.point.longitude, pickupAddress: input.pickup.address,
            pickupPlaceID: input.pickup.placeID, dropoffLatitude: input.dropoff.point.latitude, dropoffLongitude: input.dropoff.point.longitude,
            dropoffAddress: input.dropoff.address, dropoffPlaceID: input.dropoff.placeID, rideType: input.rideType,
            passengerCount: input.passengerCount, paymentMethodID: input.paymentMethodID, distanceM: Int64(quote.route.distanceMeters.rounded()),
            durationS: Int64(quote.route.durationSeconds.rounded()), fareMinMinor: quote.estimate.minMinor, fareMaxMinor: quote.estimate.maxMinor,
            currency: quote.currency, surgeMultiplier: current, surgeCell: quote.cell, searchRadiusM: Int64(config.searchRadiiMeters[0]),
            // The first round runs inline below; the scheduler takes it only if this node dies first.
            offerRound: 0, nextRoundAt: now + RideOfferRounds.inlineRoundGraceMs, expiresAt: now + Int64(config.requestTimeoutSeconds) * 1000, tripID: nil,
            driverID: nil, createdAt: now, updatedAt: now)
        try await database.transaction { db in
            try await self.store.insert(db, record)
            // An idempotent booking's answer commits with the request (as booked).
            try await answer?.record(BookedRequest(record: record, quote: quote), in: db)
        }
        statistics.requested()
        await rounds.runRound(record)
        let fresh = try await database.withConnection { db in try await self.store.find(db, id: record.id) } ?? record
        return (fresh, quote)
    }

    /// The rider cancels while searching; a matched request cancels its trip instead
    /// (`RideRequestLifecycle`'s cancel).
    public func cancelRequest(_ id: String, by identity: Identity, reason: String?) async throws -> RideRequestRecord {
        let request = try await self.request(id, for: identity)
        switch RideRequestLifecycle.decide(.init(request), .cancel) {
        case .unchanged:
            return request
        case .refused(let refusal):
            throw refusal.error
        case .deferToTrip(let tripID):
            if let tripID {
                _ = try await book.transition(tripID, to: TripState.cancelled.rawValue, by: identity, context: reason.map { ["reason": .string($0)] } ?? [:])
            }
            return try await database.withConnection { db in try await self.store.find(db, id: id) } ?? request
        case .changed(let state, let plan):
            let now = self.now
            let result = try await database.unitOfWork { work -> RideRequestRecord? in
                let db = work.db
                guard let closed = try await self.store.close(db, id: id, to: state, now: now, onlyIfExpired: false) else { return nil }
                for case .decideOffers(let outcome) in plan { try await self.store.decideOffers(db, requestID: id, winner: nil, outcome: outcome) }
                let offered = try await self.store.offeredDrivers(db, requestID: id)
                work.afterCommit { await self.announceClosed(closed, offered: offered, plan: plan) }
                return closed
            }
            // Matched or expired meanwhile: answer from what won.
            guard let closed = result else { return try await cancelRequest(id, by: identity, reason: reason) }
            return closed
        }
    }

    /// After a cancel commits: counted, the rider's screen and the offered drivers' drop it.
    private func announceClosed(_ closed: RideRequestRecord, offered: [String], plan: [RideRequestLifecycle.Effect]) async {
        for case .countUnmatched(let reason) in plan { statistics.unmatched(reason) }
        if plan.contains(.publishRequestUpdated) {
            await effects.publish(
                "ride_request_updated", ["request_id": .string(closed.id), "state": .string(closed.state.rawValue), "allowed_transitions": []],
                to: RoomName.user(closed.riderID))
        }
        for case .closeOffers(let reason) in plan {
            await effects.publish(
                batch: offered.map { ("ride:closed", ["request_id": .string(closed.id), "reason": .string(reason)], TripEffects.driverRoom($0)) })
        }
    }

    /// The request, for its rider and operators; `RIDE_REQUEST_NOT_FOUND` for anyone else.
    public func request(_ id: String, for identity: Identity) async throws -> RideRequestRecord {
        guard let request = try await database.withConnection({ db in try await self.store.find(db, id: id) }),
            request.riderID == identity.userID || identity.role == .operator || identity.role == .service
        else { throw TripError.requestNotFound }
        return request
    }

    /// A request as a driver it was offered to sees it (the driver who opens the app from
    /// the offer's push has its id and nothing else); `RIDE_REQUEST_NOT_FOUND` for a driver
    /// it was never offered to.
    public func offeredRequest(_ id: String, driverID: String) async throws -> (RideRequestRecord, RideOfferRecord) {
        let found = try await database.withConnection { db -> (RideRequestRecord, RideOfferRecord)? in
            guard let offer = try await self.store.offer(db, requestID: id, driverID: driverID),
                let request = try await self.store.find(db, id: id)
            else { return nil }
            return (request, offer)
        }
        guard let found else { throw TripError.requestNotFound }
        return found
    }

    /// The requests offered to a driver that they may still accept, newest first.
    public func openOffers(driverID: String) async throws -> [(RideRequestRecord, RideOfferRecord)] {
        let now = now
        return try await database.withConnection { db in try await self.store.openOffers(db, driverID: driverID, now: now, limit: 50) }
    }

    /// The caller's ride requests, newest first (everyone's for operators).
    public func requestHistory(for identity: Identity, offset: Int, limit: Int) async throws -> (requests: [RideRequestRecord], total: Int) {
        let rider = identity.role == .operator || identity.role == .service ? nil : identity.userID
        return try await database.withConnection { db in try await self.store.history(db, riderID: rider, offset: offset, limit: limit) }
    }
}
