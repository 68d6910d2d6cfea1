import Foundation
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// A searching ride request's offer rounds: each round offers it to the nearest free drivers
/// whose car fits (socket + push), the next widens the radius, and after the last it waits
/// for `expires_at` and ends unmatched; the ride scheduler runs whatever is due.
///
/// Why its own owner: the rounds are driven by time (the scheduler, on any node) and by other
/// owners (a booking runs its first round inline, a driver's cancel makes the request search
/// again), never by a client; their rules are dispatch's `OfferRounds`. It writes the
/// rounds' columns and the offers of `RideRequestStore`, and is the lowest of the request
/// owners: it calls none of them.
public final class RideOfferRounds: Sendable {
    /// How long the scheduler leaves a new request's first round to the request that made it.
    static let inlineRoundGraceMs: Int64 = 5_000

    let database: any Database
    let config: TripsConfig
    let vehicles: Vehicles
    let effects: TripEffects
    let statistics: TripStatistics
    let logger: Logger
    let store = RideRequestStore()
    /// Wakes the ride scheduler (a round or an expiry is due sooner than its next poll).
    let scheduleChanged = WakeSignal()

    init(database: any Database, config: TripsConfig, vehicles: Vehicles, effects: TripEffects, statistics: TripStatistics, logger: Logger) {
        self.database = database
        self.config = config
        self.vehicles = vehicles
        self.effects = effects
        self.statistics = statistics
        self.logger = logger
    }

    var now: Int64 { effects.now }

    /// Makes ride offer rounds and expiries happen on time: a round's end is
    /// `ride_requests.next_round_at`; the conditional updates let one node do each.
    public func scheduler(interval: Duration = .milliseconds(500), ready: @escaping @Sendable () async -> Bool) -> DuePoller {
        DuePoller("ride scheduler", interval: interval, wake: scheduleChanged, logger: logger, ready: ready) {
            while try await self.runDue(limit: 100) == 100 {}
        }
    }

    /// Runs every round and expiry that is due; returns how many requests it looked at.
    @discardableResult
    public func runDue(limit: Int = 100) async throws -> Int {
        let due = try await database.withConnection { db in try await self.store.due(db, now: self.now, limit: limit) }
        for request in due { await runRound(request) }
        return due.count
    }

    /// Whatever is due for a searching request: the next, wider round, or the end.
    public func runRound(_ request: RideRequestRecord) async {
        do {
            switch offerRounds(request).next(afterRound: request.offerRound, now: now) {
            case .offer(let round, let radius, let nextRoundAt):
                try await offer(request, round: round, radius: radius, nextRoundAt: nextRoundAt)
            case .waitUntil:
                try await waitForExpiry(request)
            case .expire:
                try await expire(request)
            }
        } catch {
            logger.error("a ride offer round failed", metadata: ["request_id": "\(request.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// After the last round: nothing more until `expires_at`.
    func waitForExpiry(_ request: RideRequestRecord) async throws {
        let now = self.now
        try await database.transaction { db in
            try await db.raw(
                "UPDATE ride_requests SET next_round_at = \(bind: request.expiresAt), updated_at = \(bind: now) WHERE id = \(bind: request.id) AND state = 'SEARCHING' AND offer_round = \(bind: request.offerRound)"
            ).run()
        }
        scheduleChanged.signal()
    }

    /// A request's rounds: `trips.search_radii_meters`, sharing `request_timeout_seconds`
    /// equally, and its `expires_at`.
    func offerRounds(_ request: RideRequestRecord) -> OfferRounds {
        let radii = config.searchRadiiMeters
        return OfferRounds(
            radiiMeters: radii, roundMilliseconds: Int64(config.requestTimeoutSeconds) * 1000 / Int64(radii.count), deadline: request.expiresAt)
    }

    func offer(_ request: RideRequestRecord, round: Int, radius: Double, nextRoundAt: Int64) async throws {
        let now = self.now
        let pickup = GeoPoint(latitude: request.pickupLatitude, longitude: request.pickupLongitude)
        let already = Set(try await database.withConnection { db in try await self.store.offeredDrivers(db, requestID: request.id) })
        let nearby = try await vehicles.candidates(
            near: pickup, radius: radius, rideType: request.rideType, passengers: request.passengerCount, excluding: already.union([request.riderID]))
        let matches = OfferRounds.select(nearby, offeredBefore: already, requester: request.riderID, limit: effects.notifications.maxRecipients)
        let remaining = max(1, Int((request.expiresAt - now) / 1000))
        let prepared =
            matches.isEmpty
            ? nil
            : await effects.prepare(
                NotificationDraft(
                    userIDs: matches.map(\.driverID), type: "ride_new", title: "New ride request",
                    body:
                        "\(request.pickupAddress ?? "Pickup nearby") - \(DisplayFormat.money(request.fareMinMinor, currency: request.currency))–\(DisplayFormat.money(request.fareMaxMinor, currency: request.currency))",
                    data: ["request_id": .string(request.id), "type": "ride:new"], collapseKey: "ride-\(request.id)", ttlSeconds: remaining))
        var offered = request
        offered.offerRound = round
        offered.searchRadiusM = Int64(radius)
        var events = matches.map { ("ride:new", TripJSON.offer(offered, distanceMeters: $0.distanceMeters), TripEffects.driverRoom($0.driverID)) }
        if round > 1 {
            // The rider's app animates the widening search (the rideshare design's search_radius_meters).
            let widened: JSONValue = [
                "request_id": .string(request.id), "state": "SEARCHING", "allowed_transitions": ["CANCELLED"],
                "search_radius_meters": .number(radius.rounded()), "offer_round": .number(Double(round)),
            ]
            events.append(("ride_request_updated", widened, RoomName.user(request.riderID)))
        }
        let roundEvents = events
        let started = try await database.unitOfWork { work -> Bool in
            guard try await self.store.startRound(work.db, id: request.id, round: round, radius: Int64(radius), nextRoundAt: nextRoundAt, now: now) else {
                return false
            }
            try await self.store.insertOffers(
                work.db, requestID: request.id, round: round, offers: matches.map { ($0.driverID, $0.distanceMeters) }, now: now)
            work.afterCommit {
                self.scheduleChanged.signal()
                await self.effects.publish(batch: roundEvents)
            }
            try await self.effects.write(prepared.map { [$0] } ?? [], in: work)
            return true
        }
        guard started else { return }
        statistics.offered(matches.count)
        logger.info(
            "ride offered", metadata: ["request_id": "\(request.id)", "round": "\(round)", "radius_m": "\(Int(radius))", "drivers": "\(matches.count)"])
    }

    /// The request searched until `expires_at` unmatched: it ends and the rider is told
    /// (`DRIVER_UNAVAILABLE`), the offered drivers' screens drop it (`RideRequestLifecycle`'s
    /// expiry).
    func expire(_ request: RideRequestRecord) async throws {
        guard case .changed(let state, let plan) = RideRequestLifecycle.decide(.init(request), .expire) else { return }
        let now = self.now
        var prepared: NotificationService.PreparedSend?
        if plan.contains(.notifyRider(.noDriverAvailable)) {
            prepared = await effects.prepare(
                NotificationDraft(
                    userIDs: [request.riderID], type: "trip_update", title: "No drivers available",
                    body: "No driver could take your ride right now. Please try again.",
                    data: ["request_id": .string(request.id), "state": "EXPIRED", "code": .string(ErrorCode.driverUnavailable.rawValue)],
                    collapseKey: "ride-\(request.id)"))
        }
        let notice = prepared
        let expired = try await database.unitOfWork { work -> Bool in
            let db = work.db
            guard let closed = try await self.store.close(db, id: request.id, to: state, now: now, onlyIfExpired: true) else { return false }
            for case .decideOffers(let outcome) in plan { try await self.store.decideOffers(db, requestID: request.id, winner: nil, outcome: outcome) }
            let offered = try await self.store.offeredDrivers(db, requestID: request.id)
            work.afterCommit {
                if plan.contains(.publishRequestUpdated) {
                    await self.effects.publish(
                        "ride_request_updated",
                        [
                            "request_id": .string(closed.id), "state": .string(closed.state.rawValue), "allowed_transitions": [],
                            "error": ["code": .string(ErrorCode.driverUnavailable.rawValue), "message": "No driver accepted your ride in time."],
                        ], to: RoomName.user(closed.riderID))
                }
                for case .closeOffers(let reason) in plan {
                    await self.effects.publish(
                        batch: offered.map { ("ride:closed", ["request_id": .string(closed.id), "reason": .string(reason)], TripEffects.driverRoom($0)) })
                }
            }
            try await self.effects.write(notice.map { [$0] } ?? [], in: work)
            return true
        }
        guard expired else { return }
        for case .countUnmatched(let reason) in plan { statistics.unmatched(reason) }
        logger.info("ride request expired unmatched", metadata: ["request_id": "\(request.id)"])
    }

    /// A copy of the rider's request `requestID` (read in `db`), searching again from the
    /// first round and never offered to the driver who cancelled; nil when it is gone.
    func searchAgain(requestID: String, excluding driverID: String, _ db: any SQLDatabase, now: Int64) async throws -> RideRequestRecord? {
        guard var again = try await store.find(db, id: requestID) else { return nil }
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
        try await store.insert(db, again)
        try await store.insertOffers(db, requestID: again.id, round: 0, offers: [(driverID, 0)], now: now)
        try await store.decideOffers(db, requestID: again.id, winner: nil, outcome: .cancelled)
        return again
    }
}
