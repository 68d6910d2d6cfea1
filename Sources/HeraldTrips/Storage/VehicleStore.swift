import HeraldStorage
import SQLKit

struct VehicleStore: Sendable {
    init() {}

    func find(_ db: any SQLDatabase, driverID: String) async throws -> VehicleRecord? {
        try await db.raw("SELECT * FROM vehicles WHERE driver_id = \(bind: driverID)").first(decoding: VehicleRecord.self)
    }

    func upsert(_ db: any SQLDatabase, _ v: VehicleRecord) async throws -> VehicleRecord {
        try await db.raw(
            """
            INSERT INTO vehicles (driver_id, make, model, color, license_plate, capacity, ride_types, created_at, updated_at)
            VALUES (\(bind: v.driverID), \(bind: v.make), \(bind: v.model), \(bind: v.color), \(bind: v.licensePlate), \(bind: v.capacity),
                \(bind: v.rideTypes), \(bind: v.createdAt), \(bind: v.updatedAt))
            ON CONFLICT (driver_id) DO UPDATE SET make = excluded.make, model = excluded.model, color = excluded.color,
                license_plate = excluded.license_plate, capacity = excluded.capacity, ride_types = excluded.ride_types,
                updated_at = excluded.updated_at
            """
        ).run()
        return try await find(db, driverID: v.driverID) ?? v
    }

    /// Of `driverIDs`, those whose car serves `rideType` for `passengers` and who are not
    /// driving a trip now.
    func eligible(_ db: any SQLDatabase, driverIDs: [String], rideType: String, passengers: Int) async throws -> Set<String> {
        guard !driverIDs.isEmpty else { return [] }
        var found = Set<String>()
        for chunk in stride(from: 0, to: driverIDs.count, by: 500).map({ Array(driverIDs[$0..<min($0 + 500, driverIDs.count)]) }) {
            var query = SQLQueryString("SELECT v.driver_id FROM vehicles v WHERE v.capacity >= \(bind: passengers)")
            query.appendInterpolation(unsafeRaw: " AND (',' || v.ride_types || ',') LIKE ")
            query.appendInterpolation(bind: "%,\(rideType),%")
            query.appendInterpolation(
                unsafeRaw: " AND NOT EXISTS (SELECT 1 FROM trips t WHERE t.driver_id = v.driver_id AND t.state IN ('ACCEPTED', 'ARRIVED', 'IN_PROGRESS'))")
            query.appendInterpolation(unsafeRaw: " AND v.driver_id IN (")
            for (index, id) in chunk.enumerated() {
                if index > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                query.appendInterpolation(bind: id)
            }
            query.appendInterpolation(unsafeRaw: ")")
            for row in try await db.raw(query).all() { found.insert(try row.decode(column: "driver_id", as: String.self)) }
        }
        return found
    }
}
