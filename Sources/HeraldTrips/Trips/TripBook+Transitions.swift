import Foundation
import HeraldAuth
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage

extension TripBook {
    /// `POST /trips/{id}/transitions {to, context}`: `TripLifecycle` decides from the state
    /// read, then one conditional update; a concurrent change makes it answer from the state
    /// that won. The same target again is answered with the trip (a retried request), except a
    /// second cancel (409 `TRIP_ALREADY_CANCELLED`, the rideshare design's race).
    ///
    /// The machine's effects run in their phases: the arrival check, the notifications'
    /// preparation and the trail's flush before the transaction; the fare, the event, the new
    /// search and the Live Activity inside it; the publishes, the announcement and the new
    /// search's first round after its commit.
    public func transition(_ tripID: String, to target: String, by identity: Identity, context input: [String: JSONValue]) async throws -> TripRecord {
        let trip = try await trip(tripID, for: identity)
        let actor: TripActor =
            identity.userID == trip.driverID ? .driver : identity.userID == trip.riderID ? .rider : .operator
        guard let to = TripState(rawValue: target) else { throw TripLifecycle.Refusal.unknownTarget.error }
        let current = trip.state
        let plan: [TripLifecycle.Effect]
        switch TripLifecycle.decide(from: current, to: to, by: actor) {
        case .refused(let refusal): throw refusal.error
        case .unchanged: return trip
        case .changed(_, let list): plan = list
        }
        var context = input
        let now = self.now
        if plan.contains(.confirmArrivalLocation) {
            // The rideshare design's LOCATION_REQUIRED: an arrival is confirmed by where the driver is.
            let maxAge = Int64(dispatchConfig.locationMaxAgeSeconds) * 1000
            guard let position = drivers.tracker.index.position(of: trip.driverID), now - position.time <= maxAge else {
                throw TripError.locationRequired
            }
            let pickup = GeoPoint(latitude: trip.pickupLatitude, longitude: trip.pickupLongitude)
            context["arrival_location"] = ["latitude": .number(position.point.latitude), "longitude": .number(position.point.longitude)]
            context["distance_to_pickup_meters"] = .number(Haversine.distanceMeters(position.point, pickup).rounded())
        }
        let reason = context["reason"]?.stringValue.map { String($0.prefix(500)) }
        var preparing: [NotificationService.PreparedSend] = []
        for case .notify(let notice) in plan {
            if let send = await effects.prepare(notice.draft(tripID: trip.id, riderID: trip.riderID, driverID: trip.driverID, newState: to)) {
                preparing.append(send)
            }
        }
        let prepared = preparing
        let research = plan.contains(.searchAgain)
        let contextJSON: JSONValue = .object(context)
        let baseContext = context
        // The fare is priced from the trail: what the writer still holds goes to the database first.
        if plan.contains(.flushTrail) { _ = await writer.flushOnce() }
        let result = try await database.unitOfWork { work -> TripRecord? in
            let db = work.db
            guard
                var updated = try await self.store.transition(
                    db, id: tripID, from: current, to: to, now: now, cancelledBy: to == .cancelled ? actor.rawValue : nil, reason: reason)
            else { return nil }
            if plan.contains(.settleFare) {
                let fare = try await self.trail.finalFare(updated, db, now: now)
                if let priced = try await self.store.setFinalFare(db, id: tripID, fare) { updated = priced }
            }
            if plan.contains(.recordEvent) {
                try await self.store.recordEvent(
                    db, tripID: tripID, from: current, to: to, by: actor, actorID: identity.userID, context: SocketPacketEncoder.json(contextJSON), now: now)
            }
            var again: RideRequestRecord?
            if research {
                again = try await self.rounds.searchAgain(requestID: trip.requestID, excluding: trip.driverID, db, now: now)
            }
            var eventContext = baseContext
            if let again { eventContext["new_request_id"] = .string(again.id) }
            if updated.finalFareMinor != nil { eventContext["fare"] = TripJSON.fare(updated) }
            let changed = TripJSON.stateChanged(updated, previous: current, by: actor, context: .object(eventContext), at: now)
            for case .updateLiveActivity(let withDriverName) in plan {
                if let activities = self.effects.liveActivities,
                    try await activities.publish(
                        TripActivity.change(updated, driverName: withDriverName ? try await self.drivers.record(db, userID: updated.driverID)?.name : nil),
                        in: db) > 0
                {
                    work.afterCommit { activities.wake() }
                }
            }
            let announced = updated
            work.afterCommit {
                if plan.contains(.publishStateChanged) { await self.effects.publish("trip_state_changed", changed, to: RoomName.trip(tripID)) }
                if plan.contains(.announce) { await self.effects.announce(announced) }
            }
            try await self.effects.write(prepared, in: work)
            if let again {
                work.afterCommit {
                    await self.effects.publish(
                        "ride_request_updated",
                        ["request_id": .string(again.id), "state": "SEARCHING", "allowed_transitions": ["CANCELLED"], "previous_trip_id": .string(tripID)],
                        to: RoomName.user(again.riderID))
                    await self.rounds.runRound(again)
                }
            }
            return updated
        }
        guard let updated = result else {
            let fresh = try await self.trip(tripID, for: identity)
            if let refusal = TripLifecycle.answerAfterLostRace(now: fresh.state, wanted: to) { throw refusal.error }
            return fresh
        }
        logger.info("trip changed", metadata: ["trip_id": "\(tripID)", "from": "\(current.rawValue)", "to": "\(to.rawValue)", "by": "\(actor.rawValue)"])
        return updated
    }
}
