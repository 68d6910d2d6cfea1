import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import SQLKit

extension TripService {
    // MARK: The accept

    /// The first driver to accept makes the trip (as in dispatch: one conditional
    /// update on the request's state decides). The winner's repeat gets the same trip; everyone
    /// else 409 `RIDE_ALREADY_ACCEPTED`. A driver already on a trip cannot take a second one
    /// (409 `DRIVER_BUSY`, also enforced by a unique index).
    public func accept(_ requestID: String, driverID: String) async throws -> TripRecord {
        guard let driver = try await dispatch.drivers.profile(driverID) else {
            throw APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
        }
        guard driver.approval == .approved else {
            throw APIError(
                status: 403, code: .driverNotApproved, message: "Your driver account is \(driver.approval.rawValue); only approved drivers take rides.",
                details: ["approval_status": .string(driver.approval.rawValue)])
        }
        guard let request = try await database.withConnection({ db in try await self.requests.find(db, id: requestID) }) else {
            throw TripError.requestNotFound
        }
        do {
            if let settled = try await settled(request, for: driverID) { return settled }
        } catch {
            statistics.accepted(won: false)
            throw error
        }
        guard let vehicle = try await vehicle(driverID) else {
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
                guard let matched = try await self.requests.match(db, id: requestID, driverID: driverID, tripID: tripID, now: now) else { return nil }
                if try await self.trips.activeTrip(db, driverID: driverID) != nil { throw TripError.driverBusy }
                let trip = TripRecord(id: tripID, request: matched, driverID: driverID, now: now)
                try await self.trips.insert(db, trip)
                try await self.trips.recordEvent(db, tripID: tripID, from: .requested, to: .accepted, by: .driver, actorID: driverID, context: "{}", now: now)
                try await self.requests.decideOffers(db, requestID: requestID, winner: driverID, outcome: .lost)
                let offered = try await self.requests.offeredDrivers(db, requestID: requestID)
                // Only the winner routes the rider's notification.
                let prepared = try await self.notifications.prepare(draft, in: db)
                work.afterCommit { await self.announceAccepted(trip, offered: offered, at: now) }
                if let activities = self.liveActivities,
                    try await activities.start(TripActivity.start(trip, driverName: driver.name, vehicle: vehicle, alertBody: body), in: db) > 0
                {
                    work.afterCommit { activities.wake() }
                }
                try await self.write([prepared], in: work)
                return trip
            }
        } catch let error as APIError {
            throw error
        } catch {
            // Two accepts by one driver at once: the unique index refused the second trip.
            if try await database.withConnection({ db in try await self.trips.activeTrip(db, driverID: driverID) }) != nil { throw TripError.driverBusy }
            throw error
        }
        statistics.accepted(won: result != nil)
        guard let trip = result else {
            guard let after = try await database.withConnection({ db in try await self.requests.find(db, id: requestID) }) else {
                throw TripError.requestNotFound
            }
            if let settled = try await settled(after, for: driverID) { return settled }
            throw APIError(status: 409, code: .rideRequestClosed, message: "The ride request expired.", details: ["state": "EXPIRED"])
        }
        logger.info("ride accepted", metadata: ["request_id": "\(requestID)", "trip_id": "\(trip.id)"])
        return trip
    }

    /// After an accept commits: the parties join the trip's room and hear of it, the rider's
    /// request shows the match, the other offered drivers drop it.
    private func announceAccepted(_ trip: TripRecord, offered: [String], at now: Int64) async {
        let room = RoomName.trip(trip.id)
        await addToRoom([trip.riderID, trip.driverID], room)
        await publish("trip_state_changed", TripJSON.stateChanged(trip, previous: .requested, by: .driver, context: [:], at: now), to: room)
        let view: JSONValue
        do {
            view = try await tripJSON(trip, for: Identity(userID: trip.riderID, role: .customer, expiresAt: 0))
        } catch {
            logger.error("reading an accepted trip for its rider failed", metadata: ["trip_id": "\(trip.id)", "error": "\(String(reflecting: error))"])
            view = .null
        }
        await publish(
            "ride_request_updated",
            ["request_id": .string(trip.requestID), "state": "MATCHED", "allowed_transitions": [], "trip_id": .string(trip.id), "trip": view],
            to: RoomName.user(trip.riderID))
        await publish(
            batch: offered.filter { $0 != trip.driverID }.map {
                ("ride:closed", ["request_id": .string(trip.requestID), "reason": "accepted"], Self.driverRoom($0))
            })
        await announce(trip)
    }

    /// The answer for a request that is no longer searching; nil while it can be accepted.
    func settled(_ request: RideRequestRecord, for driverID: String) async throws -> TripRecord? {
        switch request.state {
        case .searching:
            if now >= request.expiresAt {
                throw APIError(status: 409, code: .rideRequestClosed, message: "The ride request expired.", details: ["state": "EXPIRED"])
            }
            return nil
        case .matched:
            guard request.driverID == driverID, let tripID = request.tripID,
                let trip = try await database.withConnection({ db in try await self.trips.find(db, id: tripID) })
            else { throw TripError.alreadyAccepted }
            return trip
        case .cancelled, .expired:
            throw APIError(
                status: 409, code: .rideRequestClosed, message: "The ride request is \(request.state.rawValue.lowercased()).",
                details: ["state": .string(request.state.rawValue)])
        }
    }

    // MARK: Transitions

    /// `POST /trips/{id}/transitions {to, context}`: one conditional update from the state
    /// read; a concurrent change makes it answer from the state that won. The same target
    /// again is answered with the trip (a retried request), except a second cancel (409
    /// `TRIP_ALREADY_CANCELLED`, the rideshare design's race).
    public func transition(_ tripID: String, to target: String, by identity: Identity, context input: [String: JSONValue]) async throws -> TripRecord {
        let trip = try await trip(tripID, for: identity)
        let actor: TripActor =
            identity.userID == trip.driverID ? .driver : identity.userID == trip.riderID ? .rider : .operator
        guard let to = TripState(rawValue: target), to != .requested else {
            throw APIError.validation(field: "to", "must be one of ACCEPTED, ARRIVED, IN_PROGRESS, COMPLETED, CANCELLED")
        }
        let current = trip.state
        if current == .cancelled { throw TripError.alreadyCancelled }
        if current == to { return trip }
        guard actor.mayMove(to: to) else { throw TripError.notYours(actor, to: to) }
        guard current.canBecome(to) else { throw TripError.invalidTransition(from: current, to: to.rawValue) }
        var context = input
        let now = self.now
        if to == .arrived && actor == .driver {
            // The rideshare design's LOCATION_REQUIRED: an arrival is confirmed by where the driver is.
            let maxAge = Int64(dispatch.config.locationMaxAgeSeconds) * 1000
            guard let position = dispatch.drivers.tracker.index.position(of: trip.driverID), now - position.time <= maxAge else {
                throw TripError.locationRequired
            }
            let pickup = GeoPoint(latitude: trip.pickupLatitude, longitude: trip.pickupLongitude)
            context["arrival_location"] = ["latitude": .number(position.point.latitude), "longitude": .number(position.point.longitude)]
            context["distance_to_pickup_meters"] = .number(Haversine.distanceMeters(position.point, pickup).rounded())
        }
        let reason = context["reason"]?.stringValue.map { String($0.prefix(500)) }
        let drafts = pushes(trip, to: to, by: actor)
        var preparing: [NotificationService.PreparedSend] = []
        for draft in drafts { if let send = await prepare(draft) { preparing.append(send) } }
        let prepared = preparing
        // A driver who drops a rider before the ride starts: the rider's request searches again.
        let research = to == .cancelled && actor == .driver && (current == .accepted || current == .arrived)
        let contextJSON: JSONValue = .object(context)
        let baseContext = context
        // The fare is priced from the trail: what the writer still holds goes to the database first.
        if to == .completed { _ = await writer.flushOnce() }
        let result = try await database.unitOfWork { work -> TripRecord? in
            let db = work.db
            guard
                var updated = try await self.trips.transition(
                    db, id: tripID, from: current, to: to, now: now, cancelledBy: to == .cancelled ? actor.rawValue : nil, reason: reason)
            else { return nil }
            if to == .completed, let priced = try await self.trips.setFinalFare(db, id: tripID, try await self.finalFare(updated, db, now: now)) {
                updated = priced
            }
            try await self.trips.recordEvent(
                db, tripID: tripID, from: current, to: to, by: actor, actorID: identity.userID, context: SocketPacketEncoder.json(contextJSON), now: now)
            var again: RideRequestRecord?
            if research, let original = try await self.requests.find(db, id: trip.requestID) {
                again = try await self.searchAgain(original, excluding: trip.driverID, db, now: now)
            }
            var eventContext = baseContext
            if let again { eventContext["new_request_id"] = .string(again.id) }
            if updated.finalFareMinor != nil { eventContext["fare"] = TripJSON.fare(updated) }
            let changed = TripJSON.stateChanged(updated, previous: current, by: actor, context: .object(eventContext), at: now)
            if let activities = self.liveActivities,
                try await activities.publish(
                    TripActivity.change(updated, driverName: to == .arrived ? try await self.dispatch.drivers.record(db, userID: updated.driverID)?.name : nil),
                    in: db) > 0
            {
                work.afterCommit { activities.wake() }
            }
            let announced = updated
            work.afterCommit {
                await self.publish("trip_state_changed", changed, to: RoomName.trip(tripID))
                await self.announce(announced)
            }
            try await self.write(prepared, in: work)
            if let again {
                work.afterCommit {
                    await self.publish(
                        "ride_request_updated",
                        ["request_id": .string(again.id), "state": "SEARCHING", "allowed_transitions": ["CANCELLED"], "previous_trip_id": .string(tripID)],
                        to: RoomName.user(again.riderID))
                    await self.runRound(again)
                }
            }
            return updated
        }
        guard let updated = result else {
            let fresh = try await self.trip(tripID, for: identity)
            if fresh.state == .cancelled { throw TripError.alreadyCancelled }
            if fresh.state == to { return fresh }
            throw TripError.invalidTransition(from: fresh.state, to: to.rawValue)
        }
        logger.info("trip changed", metadata: ["trip_id": "\(tripID)", "from": "\(current.rawValue)", "to": "\(to.rawValue)", "by": "\(actor.rawValue)"])
        return updated
    }

    /// The fare of `trip`, completing at `now`: its shown samples since the ride started (from
    /// the last one shown before it, where the rider got in).
    func finalFare(_ trip: TripRecord, _ db: any SQLDatabase, now: Int64) async throws -> FinalFare {
        let started = trip.startedAt ?? trip.acceptedAt
        let shown = try await trail.list(db, tripID: trip.id, afterOrdinal: -1, limit: 1_000_000).filter { $0.shared != 0 }
        // From where the ride started: the last position shown before it, then every one after.
        let before = shown.last { $0.receivedAt < started }
        let points = ([before].compactMap { $0 } + shown.filter { $0.receivedAt >= started }).map { GeoPoint(latitude: $0.latitude, longitude: $0.longitude) }
        let rates = config.rideTypes[trip.rideType] ?? RideTypeConfig()
        return FinalFare(
            trail: points, startedAt: started, completedAt: now, estimatedDistanceMeters: trip.distanceM,
            model: FareModel(rates: rates, trafficFactor: config.trafficFactor), surge: trip.surgeMultiplier)
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
            guard let updated = try await self.trips.rate(db, id: tripID, byRider: byRider, rating: rating, comment: comment, now: now) else { return nil }
            if byRider {
                try await self.dispatch.drivers.addRating(db, driverID: trip.driverID, rating: rating)
            } else {
                try await self.trips.addRiderRating(db, riderID: trip.riderID, rating: rating)
            }
            return updated
        }
        if let rated { return rated }
        let fresh = try await self.trip(tripID, for: identity)
        let (given, said) = byRider ? (fresh.riderRating, fresh.riderComment) : (fresh.driverRating, fresh.driverComment)
        if given == rating && said == comment { return fresh }
        throw TripError.alreadyRated
    }

    /// A copy of the request, searching again from the first round, never offered to the
    /// driver who cancelled.
    func searchAgain(_ original: RideRequestRecord, excluding driverID: String, _ db: any SQLDatabase, now: Int64) async throws -> RideRequestRecord {
        var again = original
        again.id = Identifier.make("req", length: 16)
        again.state = .searching
        again.offerRound = 0
        again.nextRoundAt = now + Self.inlineRoundGraceMs
        again.expiresAt = now + Int64(config.requestTimeoutSeconds) * 1000
        again.tripID = nil
        again.driverID = nil
        again.searchRadiusM = Int64(config.searchRadiiMeters[0])
        again.createdAt = now
        again.updatedAt = now
        try await requests.insert(db, again)
        try await requests.insertOffers(db, requestID: again.id, round: 0, offers: [(driverID, 0)], now: now)
        try await requests.decideOffers(db, requestID: again.id, winner: nil, outcome: .cancelled)
        return again
    }

    /// The pushes of the rideshare design's table for a change, plus the silent state-sync push for a
    /// change the rider is not shown.
    func pushes(_ trip: TripRecord, to: TripState, by actor: TripActor) -> [NotificationDraft] {
        let data: [String: JSONValue] = ["trip_id": .string(trip.id), "event_type": "state_changed", "new_state": .string(to.rawValue)]
        let collapse = "trip-\(trip.id)"
        func visible(_ user: String, _ type: String, _ title: String, _ body: String) -> NotificationDraft {
            NotificationDraft(userIDs: [user], type: type, title: title, body: body, data: data, collapseKey: collapse)
        }
        switch to {
        case .arrived:
            return [visible(trip.riderID, "trip_arrived", "Driver arrived", "Your driver has arrived")]
        case .inProgress:
            return [NotificationDraft(userIDs: [trip.riderID], type: "trip_sync", title: "Trip started", data: data, collapseKey: collapse, silent: true)]
        case .completed:
            return [visible(trip.riderID, "trip_update", "Trip complete", "Trip complete. Rate your ride?")]
        case .cancelled:
            switch actor {
            case .driver:
                let finding = trip.state == .accepted || trip.state == .arrived
                return [
                    visible(
                        trip.riderID, "trip_update", "Driver cancelled",
                        finding ? "Your driver cancelled. Finding another..." : "Your driver cancelled the trip.")
                ]
            case .rider:
                return [visible(trip.driverID, "trip_update", "Trip cancelled", "The rider cancelled the trip.")]
            case .operator, .system:
                return [
                    visible(trip.riderID, "trip_update", "Trip cancelled", "Your trip was cancelled."),
                    visible(trip.driverID, "trip_update", "Trip cancelled", "The trip was cancelled."),
                ]
            }
        case .requested, .accepted:
            return []
        }
    }
}
