import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// Jobs and their audit trail.
///
/// Why every change is one conditional UPDATE … RETURNING: the claim, the driver's steps, a
/// cancel and the offer timer can race on the same job from different requests and nodes;
/// the row's current status in the WHERE clause lets exactly one of them win, with no
/// read-then-write window (the claim race the dispatch design warns of).
struct JobStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, _ job: JobRecord) async throws {
        try await db.raw(
            """
            INSERT INTO jobs (id, customer_id, driver_id, status, address, latitude, longitude, items, volume_hundredths,
                scheduled_at, notes, price_minor, currency, price_lines, offer_round, offer_radius_m, next_round_at, version,
                created_at, updated_at)
            VALUES (\(bind: job.id), \(bind: job.customerID), NULL, \(bind: job.status.rawValue), \(bind: job.address), \(bind: job.latitude),
                \(bind: job.longitude), \(bind: job.items), \(bind: job.volumeHundredths), \(bind: job.scheduledAt), \(bind: job.notes),
                \(bind: job.priceMinor), \(bind: job.currency), \(bind: job.priceLines), \(bind: job.offerRound), \(bind: job.offerRadiusM),
                \(bind: job.nextRoundAt), \(bind: job.version), \(bind: job.createdAt), \(bind: job.updatedAt))
            """
        ).run()
    }

    func find(_ db: any SQLDatabase, id: String) async throws -> JobRecord? {
        try await db.raw("SELECT * FROM jobs WHERE id = \(bind: id)").first(decoding: JobRecord.self)
    }

    /// The first-come claim: only a pending job without a driver; nil when someone else won
    /// (or the job is gone, cancelled or expired).
    func claim(_ db: any SQLDatabase, id: String, driverID: String, now: Int64) async throws -> JobRecord? {
        try await db.raw(
            """
            UPDATE jobs SET status = 'accepted', driver_id = \(bind: driverID), accepted_at = \(bind: now), updated_at = \(bind: now),
                next_round_at = NULL, version = version + 1
            WHERE id = \(bind: id) AND status = 'pending' AND driver_id IS NULL
            RETURNING *
            """
        ).first(decoding: JobRecord.self)
    }

    /// Moves the job from `from` to `to` (stamping `to`'s time column); nil when it was no
    /// longer in `from` (or, with `driverID`, not that driver's job).
    func transition(
        _ db: any SQLDatabase, id: String, from: JobStatus, to: JobStatus, driverID: String?, now: Int64,
        cancelledBy: String? = nil, reason: String? = nil
    ) async throws -> JobRecord? {
        var query = SQLQueryString("UPDATE jobs SET status = \(bind: to.rawValue), updated_at = \(bind: now), version = version + 1, next_round_at = NULL")
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
        query.appendInterpolation(unsafeRaw: " WHERE id = ")
        query.appendInterpolation(bind: id)
        query.appendInterpolation(unsafeRaw: " AND status = ")
        query.appendInterpolation(bind: from.rawValue)
        if let driverID {
            query.appendInterpolation(unsafeRaw: " AND driver_id = ")
            query.appendInterpolation(bind: driverID)
        }
        if to == .started {
            // Work waits for the customer's answer to a higher price.
            query.appendInterpolation(
                unsafeRaw: " AND NOT EXISTS (SELECT 1 FROM job_adjustments WHERE job_adjustments.job_id = jobs.id AND status = 'pending')")
        }
        query.appendInterpolation(unsafeRaw: " RETURNING *")
        return try await db.raw(query).first(decoding: JobRecord.self)
    }

    /// Takes the job's row lock for the rest of the transaction (a write that changes nothing).
    ///
    /// Why: every transaction that writes a job and its adjustment takes the job first, so two of
    /// them never wait on each other in opposite orders (a PostgreSQL deadlock, answered 500).
    /// And under READ COMMITTED the statements after it see whatever the transaction it waited
    /// for committed: a conditional UPDATE that waited on the row itself re-checks only that
    /// row, and its subqueries still read the snapshot from before the wait.
    func lock(_ db: any SQLDatabase, id: String) async throws {
        try await db.raw("UPDATE jobs SET version = version WHERE id = \(bind: id)").run()
    }

    /// Locks an arrived job of this driver for an adjustment (a concurrent status step waits
    /// for this transaction); with `price`, also stores the new price and volume.
    func touchArrived(
        _ db: any SQLDatabase, id: String, driverID: String?, price: (minor: Int64, lines: String, volumeHundredths: Int64)?, now: Int64
    ) async throws -> JobRecord? {
        var query = SQLQueryString("UPDATE jobs SET version = version + 1, updated_at = \(bind: now)")
        if let price {
            query += ", price_minor = \(bind: price.minor), price_lines = \(bind: price.lines), volume_hundredths = \(bind: price.volumeHundredths)"
        }
        query += " WHERE id = \(bind: id) AND status = 'arrived'"
        if let driverID { query += " AND driver_id = \(bind: driverID)" }
        query += " RETURNING *"
        return try await db.raw(query).first(decoding: JobRecord.self)
    }

    static let timeColumn: [JobStatus: String] = [
        .accepted: "accepted_at", .enRoute: "en_route_at", .arrived: "arrived_at", .started: "started_at",
        .completed: "completed_at", .cancelled: "cancelled_at", .expired: "expired_at",
    ]

    /// Starts offer round `round` (the job must still be pending at round `round - 1`).
    func startRound(_ db: any SQLDatabase, id: String, round: Int, radiusMeters: Int64?, nextRoundAt: Int64, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE jobs SET offer_round = \(bind: round), offer_radius_m = \(bind: radiusMeters), next_round_at = \(bind: nextRoundAt),
                updated_at = \(bind: now)
            WHERE id = \(bind: id) AND status = 'pending' AND offer_round = \(bind: round - 1)
            RETURNING id
            """
        ).first() != nil
    }

    /// Expires a pending job whose last round ended unclaimed.
    func expire(_ db: any SQLDatabase, id: String, round: Int, now: Int64) async throws -> JobRecord? {
        try await db.raw(
            """
            UPDATE jobs SET status = 'expired', expired_at = \(bind: now), updated_at = \(bind: now), next_round_at = NULL,
                version = version + 1
            WHERE id = \(bind: id) AND status = 'pending' AND offer_round = \(bind: round)
            RETURNING *
            """
        ).first(decoding: JobRecord.self)
    }

    /// Pending jobs whose round has ended, oldest first.
    func dueRounds(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [JobRecord] {
        try await db.raw(
            """
            SELECT * FROM jobs WHERE status = 'pending' AND next_round_at <= \(bind: now)
            ORDER BY next_round_at, id LIMIT \(bind: limit)
            """
        ).all(decoding: JobRecord.self)
    }

    /// Pending jobs between two latitudes, plus those without coordinates (they go to everyone).
    func openJobs(_ db: any SQLDatabase, minLatitude: Double, maxLatitude: Double, limit: Int) async throws -> [JobRecord] {
        try await db.raw(
            """
            SELECT * FROM jobs WHERE status = 'pending'
                AND ((latitude BETWEEN \(bind: minLatitude) AND \(bind: maxLatitude)) OR latitude IS NULL)
            ORDER BY created_at DESC, id LIMIT \(bind: limit)
            """
        ).all(decoding: JobRecord.self)
    }

    enum Owner: Sendable {
        case customer(String)
        case driver(String)
        case anyone
    }

    /// A page of jobs, newest first, with the total.
    func list(_ db: any SQLDatabase, owner: Owner, status: JobStatus?, offset: Int, limit: Int) async throws -> (jobs: [JobRecord], total: Int) {
        var filter = SQLQueryString(" WHERE 1 = 1")
        switch owner {
        case .customer(let id):
            filter.appendInterpolation(unsafeRaw: " AND customer_id = ")
            filter.appendInterpolation(bind: id)
        case .driver(let id):
            filter.appendInterpolation(unsafeRaw: " AND driver_id = ")
            filter.appendInterpolation(bind: id)
        case .anyone: break
        }
        if let status {
            filter.appendInterpolation(unsafeRaw: " AND status = ")
            filter.appendInterpolation(bind: status.rawValue)
        }
        let (rows, total) = try await db.page(JobRecord.self, from: "jobs", where: filter, orderBy: "created_at DESC, id", offset: offset, limit: limit)
        return (rows, total)
    }

    /// Jobs not yet final that the user booked or drives (their sockets follow these rooms).
    func activeJobIDs(_ db: any SQLDatabase, userID: String) async throws -> [String] {
        try await db.raw(
            """
            SELECT id FROM jobs WHERE (customer_id = \(bind: userID) OR driver_id = \(bind: userID))
                AND status NOT IN ('completed', 'cancelled', 'expired')
            ORDER BY created_at DESC LIMIT 100
            """
        ).all().map { try $0.decode(column: "id", as: String.self) }
    }

    func recordEvent(
        _ db: any SQLDatabase, jobID: String, from: JobStatus?, to: JobStatus, actorID: String?, actor: JobActor, reason: String? = nil,
        now: Int64
    ) async throws {
        try await db.raw(
            """
            INSERT INTO job_events (id, job_id, from_status, to_status, actor_id, actor_role, reason, created_at)
            VALUES (\(bind: Identifier.make("jev")), \(bind: jobID), \(bind: from?.rawValue), \(bind: to.rawValue), \(bind: actorID),
                \(bind: actor.rawValue), \(bind: reason), \(bind: now))
            """
        ).run()
    }

    func events(_ db: any SQLDatabase, jobID: String) async throws -> [JobEventRecord] {
        try await db.raw("SELECT * FROM job_events WHERE job_id = \(bind: jobID) ORDER BY created_at, id").all(decoding: JobEventRecord.self)
    }
}
