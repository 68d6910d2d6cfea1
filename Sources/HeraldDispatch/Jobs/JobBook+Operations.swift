import HeraldCore
import HeraldStorage
import SQLKit

extension JobBook {
    /// What the operations console shows of dispatch: the online drivers where they last were,
    /// and the open jobs (not completed, cancelled or expired) with their offer round, how many
    /// drivers were offered each and who took it.
    public func operationsView(limit: Int = 500) async throws -> (drivers: [JSONValue], jobs: [JSONValue]) {
        let open = JobStatus.allCases.filter { !$0.isFinal }.map(\.rawValue)
        return try await database.withConnection { db in
            let drivers = try await db.raw(
                """
                SELECT user_id, name, latitude, longitude, location_at FROM drivers
                WHERE online = 1 AND latitude IS NOT NULL ORDER BY location_at DESC LIMIT \(bind: limit)
                """
            ).all().map { row -> JSONValue in
                [
                    "id": .string(try row.decode(column: "user_id", as: String.self)),
                    "name": .string(try row.decode(column: "name", as: String.self)),
                    "latitude": .number(try row.decode(column: "latitude", as: Double.self)),
                    "longitude": .number(try row.decode(column: "longitude", as: Double.self)),
                    "location_at": (try row.decode(column: "location_at", as: Int64?.self)).map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null,
                ]
            }
            var query = SQLQueryString(
                """
                SELECT j.id, j.status, j.latitude, j.longitude, j.offer_round, j.driver_id, j.updated_at,
                (SELECT COUNT(*) FROM job_offers o WHERE o.job_id = j.id) AS offered FROM jobs j WHERE j.status IN
                """)
            query.appendInList(open)
            query.appendInterpolation(unsafeRaw: " ORDER BY j.updated_at DESC LIMIT ")
            query.appendInterpolation(bind: limit)
            let statement = query
            let jobs = try await db.raw(statement).all().map { row -> JSONValue in
                [
                    "id": .string(try row.decode(column: "id", as: String.self)),
                    "status": .string(try row.decode(column: "status", as: String.self)),
                    "latitude": (try row.decode(column: "latitude", as: Double?.self)).map(JSONValue.number) ?? .null,
                    "longitude": (try row.decode(column: "longitude", as: Double?.self)).map(JSONValue.number) ?? .null,
                    "offer_round": .number(Double(try row.decode(column: "offer_round", as: Int.self))),
                    "offered": .number(Double(try row.decode(column: "offered", as: Int.self))),
                    "driver_id": (try row.decode(column: "driver_id", as: String?.self)).map(JSONValue.string) ?? .null,
                ]
            }
            return (drivers, jobs)
        }
    }
}
