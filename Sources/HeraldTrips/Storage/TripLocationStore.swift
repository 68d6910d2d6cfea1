import HeraldStorage
import SQLKit

/// One sample of a trip's audit trail.
public struct TripLocationRow: Sendable, Equatable, Codable {
    public var tripID: String
    public var receivedAt: Int64
    /// The sample's place in the trip's trail on the node that took it (receipt order).
    public var ordinal: Int64
    public var sequence: Int64?
    public var latitude: Double
    public var longitude: Double
    public var accuracyM: Double?
    public var heading: Double?
    public var speedMps: Double?
    public var altitudeM: Double?
    public var batteryPercent: Double?
    public var isCharging: Int?
    public var clientAt: Int64?
    /// 1 when the rider was shown it.
    public var shared: Int
    public var warning: String?

    enum CodingKeys: String, CodingKey {
        case ordinal, sequence, latitude, longitude, heading, shared, warning
        case tripID = "trip_id"
        case receivedAt = "received_at"
        case accuracyM = "accuracy_m"
        case speedMps = "speed_mps"
        case altitudeM = "altitude_m"
        case batteryPercent = "battery_percent"
        case isCharging = "is_charging"
        case clientAt = "client_at"
    }
}

/// The audit trail of every trip: appended in batches, read by the trip's parties.
struct TripLocationStore: Sendable {
    init() {}

    func insert(_ db: any SQLDatabase, _ rows: [TripLocationRow]) async throws {
        for chunk in stride(from: 0, to: rows.count, by: 200).map({ Array(rows[$0..<min($0 + 200, rows.count)]) }) {
            var query = SQLQueryString(
                "INSERT INTO trip_locations (trip_id, received_at, ordinal, sequence, latitude, longitude, accuracy_m, heading, speed_mps, altitude_m, battery_percent, is_charging, client_at, shared, warning) VALUES "
            )
            for (index, r) in chunk.enumerated() {
                if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation(
                    """
                    (\(bind: r.tripID), \(bind: r.receivedAt), \(bind: r.ordinal), \(bind: r.sequence), \(bind: r.latitude), \(bind: r.longitude),
                    \(bind: r.accuracyM), \(bind: r.heading), \(bind: r.speedMps), \(bind: r.altitudeM), \(bind: r.batteryPercent),
                    \(bind: r.isCharging), \(bind: r.clientAt), \(bind: r.shared), \(bind: r.warning))
                    """ as SQLQueryString)
            }
            query.appendInterpolation(unsafeRaw: " ON CONFLICT (trip_id, ordinal) DO NOTHING")
            try await db.raw(query).run()
        }
    }

    func list(_ db: any SQLDatabase, tripID: String, afterOrdinal: Int64, limit: Int) async throws -> [TripLocationRow] {
        try await db.raw(
            """
            SELECT * FROM trip_locations WHERE trip_id = \(bind: tripID) AND ordinal > \(bind: afterOrdinal)
            ORDER BY ordinal LIMIT \(bind: limit)
            """
        ).all(decoding: TripLocationRow.self)
    }

    /// The newest sample the rider was shown (state_sync's `latest_driver_location`): one
    /// step down the primary key, and there even when the event history was trimmed.
    func latestShared(_ db: any SQLDatabase, tripID: String) async throws -> TripLocationRow? {
        try await db.raw(
            "SELECT * FROM trip_locations WHERE trip_id = \(bind: tripID) AND shared = 1 ORDER BY ordinal DESC LIMIT 1"
        ).first(decoding: TripLocationRow.self)
    }
}
