import HeraldCore
import HeraldStorage
import SQLKit

extension TripService {
    /// What the operations console shows of trips: the ones under way (accepted, driver
    /// arrived, in progress) with their pickup, drop-off and the driver's last shared position.
    public func operationsView(limit: Int = 500) async throws -> [JSONValue] {
        let active = TripState.allCases.filter(\.isActive).map(\.rawValue)
        return try await database.withConnection { db in
            var query = SQLQueryString(
                """
                SELECT t.id, t.state, t.driver_id, t.pickup_latitude, t.pickup_longitude, t.dropoff_latitude, t.dropoff_longitude,
                l.latitude, l.longitude, l.received_at
                FROM trips t LEFT JOIN trip_locations l ON l.trip_id = t.id
                AND l.ordinal = (SELECT MAX(ordinal) FROM trip_locations m WHERE m.trip_id = t.id AND m.shared = 1)
                WHERE t.state IN
                """)
            query.appendInList(active)
            query.appendInterpolation(unsafeRaw: " ORDER BY t.id LIMIT ")
            query.appendInterpolation(bind: limit)
            let statement = query
            return try await db.raw(statement).all().map { row -> JSONValue in
                var last: JSONValue = .null
                if let latitude = try row.decode(column: "latitude", as: Double?.self), let longitude = try row.decode(column: "longitude", as: Double?.self) {
                    last = [
                        "latitude": .number(latitude), "longitude": .number(longitude),
                        "at": (try row.decode(column: "received_at", as: Int64?.self)).map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null,
                    ]
                }
                return [
                    "id": .string(try row.decode(column: "id", as: String.self)),
                    "state": .string(try row.decode(column: "state", as: String.self)),
                    "driver_id": .string(try row.decode(column: "driver_id", as: String.self)),
                    "pickup": [
                        "latitude": .number(try row.decode(column: "pickup_latitude", as: Double.self)),
                        "longitude": .number(try row.decode(column: "pickup_longitude", as: Double.self)),
                    ],
                    "dropoff": [
                        "latitude": .number(try row.decode(column: "dropoff_latitude", as: Double.self)),
                        "longitude": .number(try row.decode(column: "dropoff_longitude", as: Double.self)),
                    ],
                    "last_position": last,
                ]
            }
        }
    }
}
