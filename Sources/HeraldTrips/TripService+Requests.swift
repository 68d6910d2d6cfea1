import Foundation
import HeraldAuth
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import SQLKit

extension TripService {
    /// How long the scheduler leaves a new request's first round to the request that made it.
    static let inlineRoundGraceMs: Int64 = 5_000

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

    /// Free drivers near `point` whose car serves the request, nearest first.
    func candidates(near point: GeoPoint, radius: Double, rideType: String, passengers: Int, excluding: Set<String>) async throws -> [DriverMatch] {
        let near = dispatch.drivers.nearby(point, radiusMeters: radius, limit: 500).filter { !excluding.contains($0.driverID) }
        guard !near.isEmpty else { return [] }
        let eligible = try await database.withConnection { db in
            try await self.vehicles.eligible(db, driverIDs: near.map(\.driverID), rideType: rideType, passengers: passengers)
        }
        return near.filter { eligible.contains($0.driverID) }
    }

    public func quote(_ input: RideRequestInput, riderID: String) async throws -> Quote {
        let route = RouteEstimate(from: input.pickup.point, to: input.dropoff.point, detourFactor: config.routeDetourFactor, speedMps: config.averageSpeedMps)
        let cell = surge.cell(latitude: input.pickup.point.latitude, longitude: input.pickup.point.longitude)
        let now = self.now
        let open = try await database.withConnection { db in try await self.requests.openCount(db, cell: cell, now: now) }
        let nearby = try await candidates(
            near: input.pickup.point, radius: config.surge.cellSizeMeters * 1.5, rideType: input.rideType, passengers: input.passengerCount,
            excluding: [riderID])
        let inCell = nearby.filter { match in
            guard let position = dispatch.drivers.tracker.index.position(of: match.driverID)?.point else { return false }
            return surge.cell(latitude: position.latitude, longitude: position.longitude) == cell
        }
        let multiplier = surge.multiplier(openRequests: open + 1, freeDrivers: inCell.count)
        let rates = config.rideTypes[input.rideType] ?? RideTypeConfig()
        let estimate = FareModel(rates: rates, trafficFactor: config.trafficFactor)
            .estimate(distanceMeters: route.distanceMeters, durationSeconds: route.durationSeconds, surge: multiplier)
        let pickupSeconds = nearby.first.map { Int(($0.distanceMeters * config.routeDetourFactor / config.averageSpeedMps).rounded()) }
        return Quote(route: route, estimate: estimate, cell: cell, estimatedPickupSeconds: pickupSeconds, currency: config.currency)
    }

    /// A booking as its transaction commits it (handed to `TransactionAnswer.record`).
    public struct BookedRequest: Sendable {
        public let record: RideRequestRecord
        public let quote: Quote

        public init(record: RideRequestRecord, quote: Quote) {
            self.record = record
            self.quote = quote
        }
    }

    /// Books a ride: SEARCHING, priced, offered at once to the nearest drivers.
    ///
    /// A surge the rider did not confirm (`surge_multiplier` in the body, as quoted) is 409
    /// `SURGE_CHANGED` with the new estimate; nothing is booked.
    public func createRequest(_ input: RideRequestInput, riderID: String) async throws -> (RideRequestRecord, Quote) {
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
            offerRound: 0, nextRoundAt: now + Self.inlineRoundGraceMs, expiresAt: now + Int64(config.requestTimeoutSeconds) * 1000, tripID: nil, driverID: nil,
            createdAt: now, updatedAt: now)
        try await database.transaction { db in
            try await self.requests.insert(db, record)
            // An idempotent booking's answer commits with the request (as booked).
            try await TransactionAnswer.record(BookedRequest(record: record, quote: quote), in: db)
        }
        statistics.requested()
        await runRound(record)
        let fresh = try await database.withConnection { db in try await self.requests.find(db, id: record.id) } ?? record
        return (fresh, quote)
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
        let already = Set(try await database.withConnection { db in try await self.requests.offeredDrivers(db, requestID: request.id) })
        let nearby = try await candidates(
            near: pickup, radius: radius, rideType: request.rideType, passengers: request.passengerCount, excluding: already.union([request.riderID]))
        let matches = OfferRounds.select(nearby, offeredBefore: already, requester: request.riderID, limit: notifications.maxRecipients)
        let remaining = max(1, Int((request.expiresAt - now) / 1000))
        let prepared =
            matches.isEmpty
            ? nil
            : await prepare(
                NotificationDraft(
                    userIDs: matches.map(\.driverID), type: "ride_new", title: "New ride request",
                    body:
                        "\(request.pickupAddress ?? "Pickup nearby") - \(DisplayFormat.money(request.fareMinMinor, currency: request.currency))–\(DisplayFormat.money(request.fareMaxMinor, currency: request.currency))",
                    data: ["request_id": .string(request.id), "type": "ride:new"], collapseKey: "ride-\(request.id)", ttlSeconds: remaining))
        var offered = request
        offered.offerRound = round
        offered.searchRadiusM = Int64(radius)
        var events = matches.map { ("ride:new", TripJSON.offer(offered, distanceMeters: $0.distanceMeters), Self.driverRoom($0.driverID)) }
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
            guard try await self.requests.startRound(work.db, id: request.id, round: round, radius: Int64(radius), nextRoundAt: nextRoundAt, now: now) else {
                return false
            }
            try await self.requests.insertOffers(
                work.db, requestID: request.id, round: round, offers: matches.map { ($0.driverID, $0.distanceMeters) }, now: now)
            work.afterCommit {
                self.scheduleChanged.signal()
                await self.publish(batch: roundEvents)
            }
            try await self.write(prepared.map { [$0] } ?? [], in: work)
            return true
        }
        guard started else { return }
        statistics.offered(matches.count)
        logger.info(
            "ride offered", metadata: ["request_id": "\(request.id)", "round": "\(round)", "radius_m": "\(Int(radius))", "drivers": "\(matches.count)"])
    }

    /// The request searched until `expires_at` unmatched: it ends and the rider is told
    /// (`DRIVER_UNAVAILABLE`), the offered drivers' screens drop it.
    func expire(_ request: RideRequestRecord) async throws {
        let now = self.now
        let prepared = await prepare(
            NotificationDraft(
                userIDs: [request.riderID], type: "trip_update", title: "No drivers available",
                body: "No driver could take your ride right now. Please try again.",
                data: ["request_id": .string(request.id), "state": "EXPIRED", "code": .string(ErrorCode.driverUnavailable.rawValue)],
                collapseKey: "ride-\(request.id)"))
        let expired = try await database.unitOfWork { work -> Bool in
            let db = work.db
            guard let closed = try await self.requests.close(db, id: request.id, to: .expired, now: now, onlyIfExpired: true) else { return false }
            try await self.requests.decideOffers(db, requestID: request.id, winner: nil, outcome: .expired)
            let offered = try await self.requests.offeredDrivers(db, requestID: request.id)
            work.afterCommit {
                await self.publish(
                    "ride_request_updated",
                    [
                        "request_id": .string(closed.id), "state": .string(closed.state.rawValue), "allowed_transitions": [],
                        "error": ["code": .string(ErrorCode.driverUnavailable.rawValue), "message": "No driver accepted your ride in time."],
                    ], to: RoomName.user(closed.riderID))
                await self.publish(batch: offered.map { ("ride:closed", ["request_id": .string(closed.id), "reason": "expired"], Self.driverRoom($0)) })
            }
            try await self.write(prepared.map { [$0] } ?? [], in: work)
            return true
        }
        guard expired else { return }
        statistics.unmatched("expired")
        logger.info("ride request expired unmatched", metadata: ["request_id": "\(request.id)"])
    }

    /// The rider cancels while searching (a matched request cancels its trip instead).
    public func cancelRequest(_ id: String, by identity: Identity, reason: String?) async throws -> RideRequestRecord {
        let request = try await self.request(id, for: identity)
        switch request.state {
        case .cancelled: return request
        case .expired: throw TripError.requestClosed(.expired)
        case .matched:
            if let tripID = request.tripID {
                _ = try await transition(tripID, to: TripState.cancelled.rawValue, by: identity, context: reason.map { ["reason": .string($0)] } ?? [:])
            }
            return try await database.withConnection { db in try await self.requests.find(db, id: id) } ?? request
        case .searching:
            let now = self.now
            let result = try await database.transaction { db -> (RideRequestRecord, [String])? in
                guard let closed = try await self.requests.close(db, id: id, to: .cancelled, now: now, onlyIfExpired: false) else { return nil }
                try await self.requests.decideOffers(db, requestID: id, winner: nil, outcome: .cancelled)
                return (closed, try await self.requests.offeredDrivers(db, requestID: id))
            }
            guard let (closed, offered) = result else {
                // Matched or expired meanwhile: answer from what won.
                return try await cancelRequest(id, by: identity, reason: reason)
            }
            statistics.unmatched("cancelled")
            await publish(
                "ride_request_updated", ["request_id": .string(closed.id), "state": .string(closed.state.rawValue), "allowed_transitions": []],
                to: RoomName.user(closed.riderID))
            await publish(batch: offered.map { ("ride:closed", ["request_id": .string(closed.id), "reason": "cancelled"], Self.driverRoom($0)) })
            return closed
        }
    }

    /// Runs every round and expiry that is due; returns how many requests it looked at.
    @discardableResult
    public func runDue(limit: Int = 100) async throws -> Int {
        let due = try await database.withConnection { db in try await self.requests.due(db, now: self.now, limit: limit) }
        for request in due { await runRound(request) }
        return due.count
    }
}
