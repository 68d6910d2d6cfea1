import HeraldStorage
import SQLKit

/// What a driver may set about themselves.
public struct DriverProfile: Sendable, Equatable {
    public var name: String
    public var phone: String?
    public var truckType: String
    public var vehicleDescription: String?
    public var licensePlate: String?
    /// An https URL of the driver's photo (the app uploads it elsewhere: Herald keeps no images).
    public var photoURL: String?

    public init(name: String, phone: String?, truckType: String, vehicleDescription: String?, licensePlate: String?, photoURL: String? = nil) {
        self.photoURL = photoURL
        self.name = name
        self.phone = phone
        self.truckType = truckType
        self.vehicleDescription = vehicleDescription
        self.licensePlate = licensePlate
    }
}

/// A position to write behind (the newest a node received for one driver).
public struct LocationWrite: Sendable, Equatable {
    public var driverID: String
    public var latitude: Double
    public var longitude: Double
    public var accuracyM: Double?
    public var heading: Double?
    public var speedMps: Double?
    public var sequence: Int64?
    public var receivedAt: Int64
    public var clientAt: Int64?
    /// The app session the sequence counts in (`LocationUpdate.session`).
    public var session: String?

    public init(
        driverID: String, latitude: Double, longitude: Double, accuracyM: Double?, heading: Double?, speedMps: Double?, sequence: Int64?,
        receivedAt: Int64, clientAt: Int64?, session: String? = nil
    ) {
        self.session = session
        self.driverID = driverID
        self.latitude = latitude
        self.longitude = longitude
        self.accuracyM = accuracyM
        self.heading = heading
        self.speedMps = speedMps
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.clientAt = clientAt
    }
}

struct DriverStore: Sendable {
    init() {}

    /// Creates the profile (approval `pending`) or updates its fields; approval is untouched.
    func upsert(_ db: any SQLDatabase, userID: String, profile: DriverProfile, now: Int64) async throws -> DriverRecord {
        guard
            let record = try await db.raw(
                """
                INSERT INTO drivers (user_id, name, phone, truck_type, vehicle_description, license_plate, photo_url, approval_status, created_at, updated_at)
                VALUES (\(bind: userID), \(bind: profile.name), \(bind: profile.phone), \(bind: profile.truckType),
                    \(bind: profile.vehicleDescription), \(bind: profile.licensePlate), \(bind: profile.photoURL), 'pending', \(bind: now), \(bind: now))
                ON CONFLICT (user_id) DO UPDATE SET name = excluded.name, phone = excluded.phone, truck_type = excluded.truck_type,
                    vehicle_description = excluded.vehicle_description, license_plate = excluded.license_plate, photo_url = excluded.photo_url,
                    updated_at = excluded.updated_at
                RETURNING *
                """
            ).first(decoding: DriverRecord.self)
        else { throw StoreError.noRowReturned }
        return record
    }

    func find(_ db: any SQLDatabase, userID: String) async throws -> DriverRecord? {
        try await db.raw("SELECT * FROM drivers WHERE user_id = \(bind: userID)").first(decoding: DriverRecord.self)
    }

    /// Adds a rider's rating of the driver to their average (`averageRating`).
    func addRating(_ db: any SQLDatabase, userID: String, rating: Int) async throws {
        try await db.raw(
            "UPDATE drivers SET rating_total = rating_total + \(bind: rating), rating_count = rating_count + 1 WHERE user_id = \(bind: userID)"
        ).run()
    }

    func setApproval(_ db: any SQLDatabase, userID: String, status: DriverApproval, reason: String?, by: String, now: Int64) async throws
        -> DriverRecord?
    {
        try await db.raw(
            """
            UPDATE drivers SET approval_status = \(bind: status.rawValue), approval_reason = \(bind: reason),
                approval_changed_at = \(bind: now), approval_changed_by = \(bind: by), updated_at = \(bind: now)
            WHERE user_id = \(bind: userID) RETURNING *
            """
        ).first(decoding: DriverRecord.self)
    }

    func setOnline(_ db: any SQLDatabase, userID: String, online: Bool, now: Int64) async throws -> DriverRecord? {
        try await db.raw(
            """
            UPDATE drivers SET online = \(bind: online ? 1 : 0), online_changed_at = \(bind: now), updated_at = \(bind: now)
            WHERE user_id = \(bind: userID) RETURNING *
            """
        ).first(decoding: DriverRecord.self)
    }

    /// Writes the newest position of each driver; an older sequence than the stored one of the
    /// same app session is skipped (a new session starts its count again).
    func writeLocations(_ db: any SQLDatabase, _ writes: [LocationWrite]) async throws {
        for write in writes {
            try await db.raw(
                """
                UPDATE drivers SET latitude = \(bind: write.latitude), longitude = \(bind: write.longitude), accuracy_m = \(bind: write.accuracyM),
                    heading = \(bind: write.heading), speed_mps = \(bind: write.speedMps), location_seq = \(bind: write.sequence),
                    location_at = \(bind: write.receivedAt), location_client_at = \(bind: write.clientAt), updated_at = \(bind: write.receivedAt),
                    location_session = COALESCE(\(bind: write.session), location_session)
                WHERE user_id = \(bind: write.driverID)
                    AND (location_at IS NULL OR location_at <= \(bind: write.receivedAt))
                    AND (\(bind: write.sequence) IS NULL OR location_seq IS NULL OR location_seq < \(bind: write.sequence)
                        OR (\(bind: write.session) IS NOT NULL AND COALESCE(location_session, '') <> \(bind: write.session)))
                """
            ).run()
        }
    }

    /// Drivers changed at or after `since` (epoch ms), for the index of other nodes.
    func changed(_ db: any SQLDatabase, since: Int64, limit: Int) async throws -> [DriverRecord] {
        try await db.raw("SELECT * FROM drivers WHERE updated_at >= \(bind: since) ORDER BY updated_at, user_id LIMIT \(bind: limit)")
            .all(decoding: DriverRecord.self)
    }

    /// Every driver who may be matched now or later: approved and online.
    func matchable(_ db: any SQLDatabase) async throws -> [DriverRecord] {
        try await db.raw("SELECT * FROM drivers WHERE approval_status = 'approved' AND online = 1").all(decoding: DriverRecord.self)
    }

    /// Approved drivers with a stored position, within a latitude band when one is given (the
    /// drivers whose feeds may show a job).
    func approvedPositions(_ db: any SQLDatabase, latitudeBand: (min: Double, max: Double)?) async throws -> [DriverRecord] {
        guard let band = latitudeBand else {
            return try await db.raw("SELECT * FROM drivers WHERE approval_status = 'approved' AND latitude IS NOT NULL").all(decoding: DriverRecord.self)
        }
        return try await db.raw(
            "SELECT * FROM drivers WHERE approval_status = 'approved' AND latitude BETWEEN \(bind: band.min) AND \(bind: band.max)"
        ).all(decoding: DriverRecord.self)
    }

    func list(_ db: any SQLDatabase, approval: DriverApproval?, online: Bool?, offset: Int, limit: Int) async throws -> (
        drivers: [DriverRecord], total: Int
    ) {
        var filter = SQLQueryString(" WHERE 1 = 1")
        if let approval {
            filter.appendInterpolation(unsafeRaw: " AND approval_status = ")
            filter.appendInterpolation(bind: approval.rawValue)
        }
        if let online {
            filter.appendInterpolation(unsafeRaw: " AND online = ")
            filter.appendInterpolation(bind: online ? 1 : 0)
        }
        let (rows, total) = try await db.page(DriverRecord.self, from: "drivers", where: filter, orderBy: "created_at, user_id", offset: offset, limit: limit)
        return (rows, total)
    }

    func drivers(_ db: any SQLDatabase, ids: [String]) async throws -> [String: DriverRecord] {
        Dictionary(
            try await db.rows(DriverRecord.self, from: "drivers", where: "user_id", in: ids).map { ($0.userID, $0) },
            uniquingKeysWith: { a, _ in a })
    }

    func recordCompletion(_ db: any SQLDatabase, userID: String, now: Int64) async throws {
        try await db.raw("UPDATE drivers SET completed_jobs = completed_jobs + 1, updated_at = \(bind: now) WHERE user_id = \(bind: userID)").run()
    }
}
