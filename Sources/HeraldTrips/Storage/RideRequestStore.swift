import HeraldDispatch
import HeraldStorage
import SQLKit

/// Ride requests and their offers. Every state change is one conditional UPDATE on `state`,
/// so an accept, a cancel and an expiry racing each other have exactly one winner.
struct RideRequestStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, _ r: RideRequestRecord) async throws {
        try await db.raw(
            """
            INSERT INTO ride_requests (id, rider_id, state, pickup_latitude, pickup_longitude, pickup_address, pickup_place_id,
                dropoff_latitude, dropoff_longitude, dropoff_address, dropoff_place_id, ride_type, passenger_count, payment_method_id,
                distance_m, duration_s, fare_min_minor, fare_max_minor, currency, surge_multiplier, surge_cell, search_radius_m,
                offer_round, next_round_at, expires_at, trip_id, driver_id, created_at, updated_at)
            VALUES (\(bind: r.id), \(bind: r.riderID), \(bind: r.state.rawValue), \(bind: r.pickupLatitude), \(bind: r.pickupLongitude),
                \(bind: r.pickupAddress), \(bind: r.pickupPlaceID), \(bind: r.dropoffLatitude), \(bind: r.dropoffLongitude),
                \(bind: r.dropoffAddress), \(bind: r.dropoffPlaceID), \(bind: r.rideType), \(bind: r.passengerCount),
                \(bind: r.paymentMethodID), \(bind: r.distanceM), \(bind: r.durationS), \(bind: r.fareMinMinor), \(bind: r.fareMaxMinor),
                \(bind: r.currency), \(bind: r.surgeMultiplier), \(bind: r.surgeCell), \(bind: r.searchRadiusM), \(bind: r.offerRound),
                \(bind: r.nextRoundAt), \(bind: r.expiresAt), \(bind: r.tripID), \(bind: r.driverID), \(bind: r.createdAt), \(bind: r.updatedAt))
            """
        ).run()
    }

    /// A page of a rider's requests (nil: everyone's), newest first, with the total.
    func history(_ db: any SQLDatabase, riderID: String?, offset: Int, limit: Int) async throws -> (requests: [RideRequestRecord], total: Int) {
        var filter = SQLQueryString(" WHERE 1 = 1")
        if let riderID {
            filter.appendInterpolation(unsafeRaw: " AND rider_id = ")
            filter.appendInterpolation(bind: riderID)
        }
        let (rows, total) = try await db.page(
            RideRequestRecord.self, from: "ride_requests", where: filter, orderBy: "created_at DESC, id", offset: offset, limit: limit)
        return (rows, total)
    }

    func find(_ db: any SQLDatabase, id: String) async throws -> RideRequestRecord? {
        try await db.raw("SELECT * FROM ride_requests WHERE id = \(bind: id)").first(decoding: RideRequestRecord.self)
    }

    /// Open requests whose pickup is in `cell` (the surge's demand).
    func openCount(_ db: any SQLDatabase, cell: String, now: Int64) async throws -> Int {
        let row = try await db.raw(
            "SELECT COUNT(*) AS n FROM ride_requests WHERE surge_cell = \(bind: cell) AND state = 'SEARCHING' AND expires_at > \(bind: now)"
        ).first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    /// The accept: SEARCHING → MATCHED for the first driver; nil for everyone after.
    func match(_ db: any SQLDatabase, id: String, driverID: String, tripID: String, now: Int64) async throws -> RideRequestRecord? {
        try await db.raw(
            """
            UPDATE ride_requests SET state = 'MATCHED', driver_id = \(bind: driverID), trip_id = \(bind: tripID), next_round_at = NULL,
                updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = 'SEARCHING' AND expires_at > \(bind: now)
            RETURNING *
            """
        ).first(decoding: RideRequestRecord.self)
    }

    /// SEARCHING → `to` (CANCELLED or EXPIRED); nil when it was no longer searching.
    func close(_ db: any SQLDatabase, id: String, to state: RideRequestState, now: Int64, onlyIfExpired: Bool) async throws -> RideRequestRecord? {
        var query = SQLQueryString(
            "UPDATE ride_requests SET state = \(bind: state.rawValue), next_round_at = NULL, updated_at = \(bind: now) WHERE id = \(bind: id) AND state = 'SEARCHING'"
        )
        if onlyIfExpired {
            query.appendInterpolation(unsafeRaw: " AND expires_at <= ")
            query.appendInterpolation(bind: now)
        }
        query.appendInterpolation(unsafeRaw: " RETURNING *")
        return try await db.raw(query).first(decoding: RideRequestRecord.self)
    }

    /// Starts offer round `round` unless another node did (the conditional update on the round).
    func startRound(_ db: any SQLDatabase, id: String, round: Int, radius: Int64, nextRoundAt: Int64, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE ride_requests SET offer_round = \(bind: round), search_radius_m = \(bind: radius), next_round_at = \(bind: nextRoundAt),
                updated_at = \(bind: now)
            WHERE id = \(bind: id) AND state = 'SEARCHING' AND offer_round = \(bind: round - 1)
            RETURNING id
            """
        ).first() != nil
    }

    /// Searching requests whose round or life ended.
    func due(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [RideRequestRecord] {
        try await db.raw(
            """
            SELECT * FROM ride_requests WHERE state = 'SEARCHING' AND next_round_at <= \(bind: now)
            ORDER BY next_round_at LIMIT \(bind: limit)
            """
        ).all(decoding: RideRequestRecord.self)
    }

    func insertOffers(_ db: any SQLDatabase, requestID: String, round: Int, offers: [(driverID: String, distance: Double)], now: Int64) async throws {
        for chunk in stride(from: 0, to: offers.count, by: 200).map({ Array(offers[$0..<min($0 + 200, offers.count)]) }) {
            var query = SQLQueryString("INSERT INTO ride_offers (request_id, driver_id, round, distance_m, offered_at) VALUES ")
            for (index, offer) in chunk.enumerated() {
                if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation(
                    "(\(bind: requestID), \(bind: offer.driverID), \(bind: round), \(bind: Int64(offer.distance.rounded())), \(bind: now))" as SQLQueryString)
            }
            query.appendInterpolation(unsafeRaw: " ON CONFLICT (request_id, driver_id) DO NOTHING")
            try await db.raw(query).run()
        }
    }

    /// The offer of a request made to a driver (nil: never offered to them).
    func offer(_ db: any SQLDatabase, requestID: String, driverID: String) async throws -> RideOfferRecord? {
        try await db.raw(
            """
            SELECT request_id, driver_id, round, distance_m, offered_at, outcome FROM ride_offers
            WHERE request_id = \(bind: requestID) AND driver_id = \(bind: driverID)
            """
        ).first(decoding: RideOfferRecord.self)
    }

    /// The requests offered to a driver that are still open to them: undecided, still
    /// searching, not expired. Newest first.
    func openOffers(_ db: any SQLDatabase, driverID: String, now: Int64, limit: Int) async throws -> [(RideRequestRecord, RideOfferRecord)] {
        let offers = try await db.raw(
            """
            SELECT o.request_id, o.driver_id, o.round, o.distance_m, o.offered_at, o.outcome FROM ride_offers o
            JOIN ride_requests r ON r.id = o.request_id
            WHERE o.driver_id = \(bind: driverID) AND o.outcome IS NULL AND r.state = \(bind: RideRequestState.searching.rawValue)
                AND r.expires_at > \(bind: now)
            ORDER BY o.offered_at DESC, o.request_id LIMIT \(bind: limit)
            """
        ).all(decoding: RideOfferRecord.self)
        var result: [(RideRequestRecord, RideOfferRecord)] = []
        for offer in offers {
            if let request = try await find(db, id: offer.requestID) { result.append((request, offer)) }
        }
        return result
    }

    func offeredDrivers(_ db: any SQLDatabase, requestID: String) async throws -> [String] {
        try await db.raw("SELECT driver_id FROM ride_offers WHERE request_id = \(bind: requestID)").all().map {
            try $0.decode(column: "driver_id", as: String.self)
        }
    }

    func decideOffers(_ db: any SQLDatabase, requestID: String, winner: String?, outcome: OfferOutcome) async throws {
        try await db.raw(
            """
            UPDATE ride_offers SET outcome = CASE WHEN driver_id = \(bind: winner ?? "") THEN \(bind: OfferOutcome.won.rawValue) ELSE \(bind: outcome.rawValue) END
            WHERE request_id = \(bind: requestID) AND outcome IS NULL
            """
        ).run()
    }
}
