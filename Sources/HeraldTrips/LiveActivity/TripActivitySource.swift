import HeraldAuth
import HeraldDispatch
import HeraldNotifications
import HeraldStorage

/// The trips module's answer to an activity registration: the trip's parties may follow it.
struct TripActivitySource: LiveActivitySource {
    let database: any Database
    let book: TripBook
    let drivers: DriverDirectory
    let vehicles: Vehicles

    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        let found = try await database.withConnection { db -> (TripRecord, String?, VehicleRecord?)? in
            guard let trip = try await book.find(db, id: subjectID), trip.riderID == userID || trip.driverID == userID else { return nil }
            let driver = try await drivers.record(db, userID: trip.driverID)
            return (trip, driver?.name, try await vehicles.find(db, driverID: trip.driverID))
        }
        guard let (trip, name, vehicle) = found else { return nil }
        return LiveActivitySnapshot(content: TripActivity.content(trip, driverName: name, vehicle: vehicle), ended: trip.state.isFinal)
    }
}
