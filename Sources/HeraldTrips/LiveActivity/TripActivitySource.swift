import HeraldAuth
import HeraldNotifications
import HeraldStorage

/// The trips module's answer to an activity registration: the trip's parties may follow it.
struct TripActivitySource: LiveActivitySource {
    let service: TripService

    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        let found = try await service.database.withConnection { db -> (TripRecord, String?, VehicleRecord?)? in
            guard let trip = try await service.trips.find(db, id: subjectID), trip.riderID == userID || trip.driverID == userID else { return nil }
            let driver = try await service.dispatch.drivers.record(db, userID: trip.driverID)
            return (trip, driver?.name, try await service.vehicles.find(db, driverID: trip.driverID))
        }
        guard let (trip, name, vehicle) = found else { return nil }
        return LiveActivitySnapshot(content: TripActivity.content(trip, driverName: name, vehicle: vehicle), ended: trip.state.isFinal)
    }
}
