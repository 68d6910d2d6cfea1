import HeraldAuth
import HeraldGeo
import HeraldStorage
import SQLKit

/// A trip's location audit trail as it is read: by the trip's parties, by `state_sync` (the
/// latest shared position) and by the fare (the samples the rider was shown).
///
/// Why its own owner: the trail is written only by `TripLocationWriter` in batches and read
/// in three places with three rules (who sees which samples, which one is "latest", which
/// ones price the ride); keeping those rules next to `TripLocationStore` keeps them alike.
public final class TripTrail: Sendable {
    let database: any Database
    let config: TripsConfig
    let store = TripLocationStore()

    init(database: any Database, config: TripsConfig) {
        self.database = database
        self.config = config
    }

    /// The audit trail of `trip` (one `TripBook.trip(_:for:)` gave `identity`): the driver and
    /// operators see every sample in full, the rider the shared ones.
    public func locations(of trip: TripRecord, for identity: Identity, after: Int64, limit: Int) async throws -> (rows: [TripLocationRow], full: Bool) {
        let full = trip.riderID != identity.userID || identity.role == .operator
        var rows = try await database.withConnection { db in
            try await self.store.list(db, tripID: trip.id, afterOrdinal: after, limit: full ? limit : limit * 4)
        }
        if !full { rows = Array(rows.filter { $0.shared != 0 }.prefix(limit)) }
        return (rows, full)
    }

    /// The newest sample the rider was shown, inside the caller's connection.
    func latestShared(_ db: any SQLDatabase, tripID: String) async throws -> TripLocationRow? {
        try await store.latestShared(db, tripID: tripID)
    }

    /// The fare of `trip`, completing at `now`: its shown samples since the ride started (from
    /// the last one shown before it, where the rider got in).
    func finalFare(_ trip: TripRecord, _ db: any SQLDatabase, now: Int64) async throws -> FinalFare {
        let started = trip.startedAt ?? trip.acceptedAt
        let shown = try await store.list(db, tripID: trip.id, afterOrdinal: -1, limit: 1_000_000).filter { $0.shared != 0 }
        // From where the ride started: the last position shown before it, then every one after.
        let before = shown.last { $0.receivedAt < started }
        let points = ([before].compactMap { $0 } + shown.filter { $0.receivedAt >= started }).map { GeoPoint(latitude: $0.latitude, longitude: $0.longitude) }
        let rates = config.rideTypes[trip.rideType] ?? RideTypeConfig()
        return FinalFare(
            trail: points, startedAt: started, completedAt: now, estimatedDistanceMeters: trip.distanceM,
            model: FareModel(rates: rates, trafficFactor: config.trafficFactor), surge: trip.surgeMultiplier)
    }
}
