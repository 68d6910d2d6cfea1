import HeraldCore
import HeraldStorage
import HeraldGTFS

/// A signed-in user's favourite stops (seed 003 §2.5), in their order.
extension TransitService {
    /// Most favourites one user keeps.
    public static let maxFavorites = 100

    /// The user's favourites with each stop's name from the feed serving now (nil for a stop
    /// a newer feed no longer has: the favourite stays, the app shows it greyed out).
    public func favorites(userID: String) async throws -> [(record: FavoriteRecord, stopName: String?)] {
        let records = try await database.withConnection { [favoriteStore] db in try await favoriteStore.list(db, userID: userID) }
        let current = snapshot
        return records.map { ($0, current.stop($0.stopID).flatMap { feed, stop in feed.timetable.feed.stops[Int(stop)].name }) }
    }

    /// Adds a stop at the end of the user's list.
    public func addFavorite(userID: String, stopID: String, label: String?, notificationsEnabled: Bool) async throws -> (FavoriteRecord, String?) {
        let current = snapshot
        guard !current.isEmpty else { throw TransitError.noTimetable }
        guard let (feed, stop) = current.stop(stopID) else { throw TransitError.stopNotFound(stopID) }
        let now = nowMs
        let record = try await database.transaction { [favoriteStore] db -> FavoriteRecord in
            if let existing = try await favoriteStore.findByStop(db, userID: userID, stopID: stopID) { throw TransitError.favoriteExists(existing.id) }
            let count = try await favoriteStore.count(db, userID: userID)
            guard count < Self.maxFavorites else { throw TransitError.favoritesFull(Self.maxFavorites) }
            let candidate = FavoriteRecord(
                id: Identifier.make("fav", length: 16), userID: userID, stopID: stopID, label: label, sortOrder: count,
                notificationsEnabled: notificationsEnabled, createdAt: now, updatedAt: now)
            // A concurrent add of the same stop loses on the unique index.
            guard let inserted = try await favoriteStore.insert(db, candidate) else {
                let existing = try await favoriteStore.findByStop(db, userID: userID, stopID: stopID)
                throw TransitError.favoriteExists(existing?.id ?? "")
            }
            return inserted
        }
        return (record, feed.timetable.feed.stops[Int(stop)].name)
    }

    /// Changes a favourite's label, switch or place; a new `sortOrder` moves it there and
    /// renumbers the list 0, 1, 2, ….
    public func updateFavorite(
        userID: String, id: String, label: String??, notificationsEnabled: Bool?, sortOrder: Int?
    ) async throws -> (FavoriteRecord, String?) {
        let now = nowMs
        let record = try await database.transaction { [favoriteStore] db -> FavoriteRecord in
            guard var record = try await favoriteStore.find(db, id: id, userID: userID) else { throw TransitError.favoriteNotFound }
            if let label { record.label = label }
            if let notificationsEnabled { record.notificationsEnabled = notificationsEnabled }
            record.updatedAt = now
            try await favoriteStore.update(db, record)
            if let sortOrder {
                var list = try await favoriteStore.list(db, userID: userID).map(\.id).filter { $0 != id }
                list.insert(id, at: max(0, min(sortOrder, list.count)))
                for (index, favorite) in list.enumerated() {
                    try await favoriteStore.setOrder(db, id: favorite, userID: userID, sortOrder: index, now: now)
                }
                record.sortOrder = list.firstIndex(of: id)!
            }
            return record
        }
        return (record, snapshot.stop(record.stopID).flatMap { feed, stop in feed.timetable.feed.stops[Int(stop)].name })
    }

    /// Removes a favourite and closes the gap in the order.
    public func deleteFavorite(userID: String, id: String) async throws {
        let now = nowMs
        try await database.transaction { [favoriteStore] db in
            guard try await favoriteStore.delete(db, id: id, userID: userID) else { throw TransitError.favoriteNotFound }
            for (index, favorite) in try await favoriteStore.list(db, userID: userID).enumerated() where favorite.sortOrder != index {
                try await favoriteStore.setOrder(db, id: favorite.id, userID: userID, sortOrder: index, now: now)
            }
        }
    }
}
