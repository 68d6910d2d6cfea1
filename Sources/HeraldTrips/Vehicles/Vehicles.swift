import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldStorage
import SQLKit

/// Drivers' vehicles: what each driver drives, and which nearby drivers' cars serve a ride.
///
/// Why its own owner: a ride is offered only to drivers whose car fits it (ride type,
/// seats) and who are not on a trip; quotes, offer rounds, the accept and the trip's view all
/// ask that here, and only the driver's own `PUT` changes it. It owns `VehicleStore`.
public final class Vehicles: Sendable {
    let database: any Database
    /// Dispatch's drivers: the profile a vehicle belongs to, and the spatial index searched.
    let drivers: DriverDirectory
    let clock: any HeraldClock
    let store = VehicleStore()

    init(database: any Database, drivers: DriverDirectory, clock: any HeraldClock) {
        self.database = database
        self.drivers = drivers
        self.clock = clock
    }

    var now: Int64 { clock.now().epochMilliseconds }

    public func vehicle(_ driverID: String) async throws -> VehicleRecord? {
        try await database.withConnection { db in try await self.store.find(db, driverID: driverID) }
    }

    /// The vehicle inside another owner's connection or transaction.
    func find(_ db: any SQLDatabase, driverID: String) async throws -> VehicleRecord? {
        try await store.find(db, driverID: driverID)
    }

    public func save(_ driverID: String, _ input: VehicleInput) async throws -> VehicleRecord {
        guard try await drivers.profile(driverID) != nil else {
            throw APIError(status: 404, code: .driverNotFound, message: "Create your driver profile first (PUT /api/v1/drivers/me).")
        }
        let now = self.now
        let record = VehicleRecord(
            driverID: driverID, make: input.make, model: input.model, color: input.color, licensePlate: input.licensePlate,
            capacity: input.capacity, rideTypes: input.rideTypes.joined(separator: ","), createdAt: now, updatedAt: now)
        return try await database.transaction { db in try await self.store.upsert(db, record) }
    }

    /// Free drivers near `point` whose car serves the request, nearest first.
    func candidates(near point: GeoPoint, radius: Double, rideType: String, passengers: Int, excluding: Set<String>) async throws -> [DriverMatch] {
        let near = drivers.nearby(point, radiusMeters: radius, limit: 500).filter { !excluding.contains($0.driverID) }
        guard !near.isEmpty else { return [] }
        let eligible = try await database.withConnection { db in
            try await self.store.eligible(db, driverIDs: near.map(\.driverID), rideType: rideType, passengers: passengers)
        }
        return near.filter { eligible.contains($0.driverID) }
    }
}
