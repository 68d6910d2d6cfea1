import SQLKit

/// Volume adjustments.
///
/// Why every decision is one conditional UPDATE on `status = 'pending'`: approve, decline,
/// the driver's trip-fee cancel and an operator's cancel can arrive together (a race the
/// price-adjustment design warns of); exactly one of them changes the row, and the others read what won.
struct AdjustmentStore: Sendable {
    init() {}

    /// Inserts the job's adjustment; false when the job already has one.
    func insert(_ db: any SQLDatabase, _ a: AdjustmentRecord) async throws -> Bool {
        try await db.raw(
            """
            INSERT INTO job_adjustments (job_id, driver_id, customer_id, status, automatic, original_volume_hundredths,
                actual_volume_hundredths, original_price_minor, new_price_minor, currency, price_lines, trip_fee_minor, deadline_at,
                extensions, expired_at, decided_at, decided_by, created_at, updated_at)
            VALUES (\(bind: a.jobID), \(bind: a.driverID), \(bind: a.customerID), \(bind: a.status.rawValue), \(bind: a.automatic),
                \(bind: a.originalVolumeHundredths), \(bind: a.actualVolumeHundredths), \(bind: a.originalPriceMinor), \(bind: a.newPriceMinor),
                \(bind: a.currency), \(bind: a.priceLines), \(bind: a.tripFeeMinor), \(bind: a.deadlineAt), \(bind: a.extensions),
                \(bind: a.expiredAt), \(bind: a.decidedAt), \(bind: a.decidedBy), \(bind: a.createdAt), \(bind: a.updatedAt))
            ON CONFLICT (job_id) DO NOTHING
            RETURNING job_id
            """
        ).first() != nil
    }

    func find(_ db: any SQLDatabase, jobID: String) async throws -> AdjustmentRecord? {
        try await db.raw("SELECT * FROM job_adjustments WHERE job_id = \(bind: jobID)").first(decoding: AdjustmentRecord.self)
    }

    /// Decides a pending adjustment; nil when it was no longer pending.
    func decide(
        _ db: any SQLDatabase, jobID: String, to status: AdjustmentStatus, by actor: String, tripFeeMinor: Int64?, now: Int64,
        onlyAfterDeadline: Bool = false
    ) async throws -> AdjustmentRecord? {
        var query = SQLQueryString(
            """
            UPDATE job_adjustments SET status = \(bind: status.rawValue), decided_at = \(bind: now), decided_by = \(bind: actor),
                trip_fee_minor = \(bind: tripFeeMinor), updated_at = \(bind: now)
            WHERE job_id = \(bind: jobID) AND status = 'pending'
            """)
        if onlyAfterDeadline { query += " AND deadline_at <= \(bind: now)" }
        query += " RETURNING *"
        return try await db.raw(query).first(decoding: AdjustmentRecord.self)
    }

    /// Gives a pending proposal a new deadline (counting the extension); nil when it was not
    /// pending or the extensions are used up.
    func extend(_ db: any SQLDatabase, jobID: String, deadline: Int64, maxExtensions: Int, now: Int64) async throws -> AdjustmentRecord? {
        try await db.raw(
            """
            UPDATE job_adjustments SET deadline_at = \(bind: deadline), extensions = extensions + 1, expired_at = NULL, updated_at = \(bind: now)
            WHERE job_id = \(bind: jobID) AND status = 'pending' AND extensions < \(bind: maxExtensions)
            RETURNING *
            """
        ).first(decoding: AdjustmentRecord.self)
    }

    /// Pending proposals whose deadline passed and whose driver was not told yet.
    func dueExpiries(_ db: any SQLDatabase, now: Int64, limit: Int) async throws -> [AdjustmentRecord] {
        try await db.raw(
            """
            SELECT * FROM job_adjustments WHERE status = 'pending' AND deadline_at <= \(bind: now) AND expired_at IS NULL
            ORDER BY deadline_at LIMIT \(bind: limit)
            """
        ).all(decoding: AdjustmentRecord.self)
    }

    /// Marks the deadline as passed; false when another node did, or the proposal changed.
    func markExpired(_ db: any SQLDatabase, jobID: String, deadline: Int64, now: Int64) async throws -> Bool {
        try await db.raw(
            """
            UPDATE job_adjustments SET expired_at = \(bind: now), updated_at = \(bind: now)
            WHERE job_id = \(bind: jobID) AND status = 'pending' AND expired_at IS NULL AND deadline_at = \(bind: deadline)
            RETURNING job_id
            """
        ).first() != nil
    }
}
