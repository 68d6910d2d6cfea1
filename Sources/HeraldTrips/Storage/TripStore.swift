import HeraldCore
import HeraldDispatch
import HeraldStorage
import SQLKit

/// Trips, their state history and the last known driver location.
struct TripStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, _ t: TripRecord) async throws {
        try await db.raw(
            """
            INSERT INTO trips (id, request_id, rider_id, driver_id, state, version, pickup_latitude, pickup_longitude, pickup_address,
                pickup_place_id, dropoff_latitude, dropoff_longitude, dropoff_address, dropoff_place_id, ride_type, passenger_count,
                distance_m, duration_s, fare_min_minor, fare_max_minor, currency, surge_multiplier, flags, accepted_at, created_at, updated_at)
            VALUES (\(bind: t.id), \(bind: t.requestID), \(bind: t.riderID), \(bind: t.driverID), \(bind: t.state.rawValue), \(bind: t.version),
                \(bind: t.pickupLatitude), \(bind: t.pickupLongitude), \(bind: t.pickupAddress), \(bind: t.pickupPlaceID),
                \(bind: t.dropoffLatitude), \(bind: t.dropoffLongitude), \(bind: t.dropoffAddress), \(bind: t.dropoffPlaceID),
                \(bind: t.rideType), \(bind: t.passengerCount), \(bind: t.distanceM), \(bind: t.durationS), \(bind: t.fareMinMinor),
                \(bind: t.fareMaxMinor), \(bind: t.currency), \(bind: t.surgeMultiplier), 0, \(bind: t.acceptedAt), \(bind: t.createdAt),
                \(bind: t.updatedAt))
            """
        ).run()
    }

    func find(_ db: any SQLDatabase, id: String) async throws -> TripRecord? {
        try await db.raw("SELECT * FROM trips WHERE id = \(bind: id)").first(decoding: TripRecord.self)
    }

    /// The trip the driver is committed to now, if any.
    func activeTrip(_ db: any SQLDatabase, driverID: String) async throws -> TripRecord? {
        try await db.raw(
            "SELECT * FROM trips WHERE driver_id = \(bind: driverID) AND state IN ('ACCEPTED', 'ARRIVED', 'IN_PROGRESS')"
        ).first(decoding: TripRecord.self)
    }

    /// Whose trips a history page lists.
    enum Party: Sendable {
        case rider(String)
        case driver(String)
        case anyone
    }

    /// A page of trips, newest first, with the total.
    func history(_ db: any SQLDatabase, of party: Party, state: TripState?, offset: Int, limit: Int) async throws -> (trips: [TripRecord], total: Int) {
        var filter = SQLQueryString(" WHERE 1 = 1")
        switch party {
        case .rider(let id):
            filter.appendInterpolation(unsafeRaw: " AND rider_id = ")
            filter.appendInterpolation(bind: id)
        case .driver(let id):
            filter.appendInterpolation(unsafeRaw: " AND driver_id = ")
            filter.appendInterpolation(bind: id)
        case .anyone: break
        }
        if let state {
            filter.appendInterpolation(unsafeRaw: " AND state = ")
            filter.appendInterpolation(bind: state.rawValue)
        }
        let (rows, total) = try await db.page(TripRecord.self, from: "trips", where: filter, orderBy: "created_at DESC, id", offset: offset, limit: limit)
        return (rows, total)
    }

    /// Trips not over that the user rides or drives.
    func activeTripIDs(_ db: any SQLDatabase, userID: String) async throws -> [String] {
        try await db.raw(
            """
            SELECT id FROM trips WHERE (rider_id = \(bind: userID) OR driver_id = \(bind: userID))
            AND state IN ('ACCEPTED', 'ARRIVED', 'IN_PROGRESS')
            """
        ).all().map { try $0.decode(column: "id", as: String.self) }
    }

    static let timeColumn: [TripState: String] = [
        .arrived: "arrived_at", .inProgress: "started_at", .completed: "completed_at", .cancelled: "cancelled_at",
    ]

    /// `from` → `to` in one conditional update; nil when the trip was no longer in `from`.
    func transition(
        _ db: any SQLDatabase, id: String, from: TripState, to: TripState, now: Int64, cancelledBy: String?, reason: String?
    ) async throws -> TripRecord? {
        var query = SQLQueryString("UPDATE trips SET state = \(bind: to.rawValue), version = version + 1, updated_at = \(bind: now)")
        if let column = Self.timeColumn[to] {
            query.appendInterpolation(unsafeRaw: ", \(column) = ")
            query.appendInterpolation(bind: now)
        }
        if to == .cancelled {
            query.appendInterpolation(unsafeRaw: ", cancelled_by = ")
            query.appendInterpolation(bind: cancelledBy)
            query.appendInterpolation(unsafeRaw: ", cancel_reason = ")
            query.appendInterpolation(bind: reason)
        }
        query.appendInterpolation(" WHERE id = \(bind: id) AND state = \(bind: from.rawValue) RETURNING *" as SQLQueryString)
        return try await db.raw(query).first(decoding: TripRecord.self)
    }

    /// Stores the fare of a trip that just completed.
    func setFinalFare(_ db: any SQLDatabase, id: String, _ fare: FinalFare) async throws -> TripRecord? {
        try await db.raw(
            """
            UPDATE trips SET final_fare_minor = \(bind: fare.amountMinor), travelled_distance_m = \(bind: fare.distanceMeters),
                travelled_duration_s = \(bind: fare.durationSeconds)
            WHERE id = \(bind: id) AND state = 'COMPLETED' RETURNING *
            """
        ).first(decoding: TripRecord.self)
    }

    /// Records one side's rating of the other on a completed trip; nil when the trip is not
    /// completed or that side already rated.
    func rate(_ db: any SQLDatabase, id: String, byRider: Bool, rating: Int, comment: String?, now: Int64) async throws -> TripRecord? {
        let (ratingColumn, commentColumn) = byRider ? ("rider_rating", "rider_comment") : ("driver_rating", "driver_comment")
        var query = SQLQueryString("UPDATE trips SET ")
        query.appendInterpolation(unsafeRaw: "\(ratingColumn) = ")
        query.appendInterpolation(bind: rating)
        query.appendInterpolation(unsafeRaw: ", \(commentColumn) = ")
        query.appendInterpolation(bind: comment)
        query.appendInterpolation(" , version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: id) AND state = 'COMPLETED' AND " as SQLQueryString)
        query.appendInterpolation(unsafeRaw: "\(ratingColumn) IS NULL RETURNING *")
        return try await db.raw(query).first(decoding: TripRecord.self)
    }

    /// Adds a driver's rating of `riderID` to the rider's average.
    func addRiderRating(_ db: any SQLDatabase, riderID: String, rating: Int) async throws {
        try await db.raw(
            """
            INSERT INTO rider_ratings (user_id, rating_total, rating_count) VALUES (\(bind: riderID), \(bind: rating), 1)
            ON CONFLICT (user_id) DO UPDATE SET rating_total = rider_ratings.rating_total + excluded.rating_total,
                rating_count = rider_ratings.rating_count + 1
            """
        ).run()
    }

    /// A rider's average rating (one decimal), nil before the first.
    func riderRating(_ db: any SQLDatabase, riderID: String) async throws -> Double? {
        struct Row: Decodable {
            var ratingTotal: Int64
            var ratingCount: Int64
            enum CodingKeys: String, CodingKey {
                case ratingTotal = "rating_total"
                case ratingCount = "rating_count"
            }
        }
        let row = try await db.raw("SELECT rating_total, rating_count FROM rider_ratings WHERE user_id = \(bind: riderID)").first(decoding: Row.self)
        return row.flatMap { DriverRecord.averageRating(total: $0.ratingTotal, count: $0.ratingCount) }
    }

    func recordEvent(
        _ db: any SQLDatabase, tripID: String, from: TripState, to: TripState, by actor: TripActor, actorID: String?, context: String, now: Int64
    ) async throws {
        try await db.raw(
            """
            INSERT INTO trip_events (id, trip_id, from_state, to_state, triggered_by, actor_id, context, created_at)
            VALUES (\(bind: Identifier.make("tev")), \(bind: tripID), \(bind: from.rawValue), \(bind: to.rawValue), \(bind: actor.rawValue),
                \(bind: actorID), \(bind: context), \(bind: now))
            """
        ).run()
    }

    /// A fraud warning: counted on the trip for operators.
    func flag(_ db: any SQLDatabase, id: String, code: String, now: Int64) async throws {
        try await db.raw(
            "UPDATE trips SET flags = flags + 1, last_flag = \(bind: code), version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: id)"
        ).run()
    }
}
