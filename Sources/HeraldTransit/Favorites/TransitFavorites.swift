import HeraldCore
import HeraldGTFS
import HeraldStorage

/// A signed-in user's favourite stops and routes (the transit design's favourites, plus whole
/// routes and stops narrowed to routes), in their order.
///
/// Why an owner of its own: the favourites table is also the alert pusher's reverse index
/// (`store.atStops`, `store.ofRoutes`), so its rules (one per place, at most
/// `maxFavorites`, a narrowing only to routes that serve the stop) live in one place.
public final class TransitFavorites: Sendable {
    /// Most favourites one user keeps.
    public static let maxFavorites = 100
    /// Most routes a stop favourite is narrowed to.
    public static let maxFavoriteRoutes = 50

    let database: any Database
    let clock: any HeraldClock
    let served: ServedFeeds
    /// Read by `AlertMatcher` too: the favourites at the stops an alert reaches.
    let store = FavoriteStore()

    init(database: any Database, clock: any HeraldClock, served: ServedFeeds) {
        self.database = database
        self.clock = clock
        self.served = served
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// The user's favourites, each with its stop's or route's name from the feed serving now
    /// (nil for one a newer feed no longer has: the favourite stays, the app greys it out).
    public func list(userID: String) async throws -> [(record: FavoriteRecord, stopName: String?)] {
        let records = try await database.withConnection { [store] db in try await store.list(db, userID: userID) }
        let current = served.snapshot
        return records.map { ($0, Self.name(of: $0, in: current)) }
    }

    /// The favourite's stop name, or for a route favourite the route's short name (else long).
    static func name(of record: FavoriteRecord, in current: TransitSnapshot) -> String? {
        if let routeID = record.routeID {
            return current.route(routeID).flatMap { feed, route in
                let r = feed.timetable.feed.routes[Int(route)]
                return r.shortName ?? r.longName
            }
        }
        return current.stop(record.stopID).flatMap { feed, stop in feed.timetable.feed.stops[Int(stop)].name }
    }

    /// What a favourite is of: a stop (its alerts through every route, or through `routes`
    /// only) or a whole route.
    public enum FavoritePlace: Sendable, Equatable {
        case stop(String, routes: [String]?)
        case route(String)
    }

    /// Adds a stop or route at the end of the user's list.
    public func add(userID: String, stopID: String, label: String?, notificationsEnabled: Bool) async throws -> (FavoriteRecord, String?) {
        try await add(userID: userID, place: .stop(stopID, routes: nil), label: label, notificationsEnabled: notificationsEnabled)
    }

    public func add(userID: String, place: FavoritePlace, label: String?, notificationsEnabled: Bool) async throws -> (FavoriteRecord, String?) {
        let current = served.snapshot
        guard !current.isEmpty else { throw TransitError.noTimetable }
        let now = nowMs
        var candidate = FavoriteRecord(
            id: Identifier.make("fav", length: 16), userID: userID, stopID: "", label: label, sortOrder: 0, notificationsEnabled: notificationsEnabled,
            createdAt: now, updatedAt: now)
        switch place {
        case .stop(let stopID, let routes):
            guard current.stop(stopID) != nil else { throw TransitError.stopNotFound(stopID) }
            candidate.stopID = stopID
            candidate.routeIDs = try routes.map { try Self.checkRoutes($0, at: stopID, in: current) }
        case .route(let routeID):
            guard current.route(routeID) != nil else { throw TransitError.routeNotFound(routeID) }
            candidate.routeID = routeID
        }
        let record = try await database.transaction { [store, candidate] db -> FavoriteRecord in
            if let existing = try await store.findSame(db, as: candidate) { throw TransitError.favoriteExists(existing.id) }
            let count = try await store.count(db, userID: userID)
            guard count < Self.maxFavorites else { throw TransitError.favoritesFull(Self.maxFavorites) }
            var candidate = candidate
            candidate.sortOrder = count
            // A concurrent add of the same stop or route loses on the unique index.
            guard let inserted = try await store.insert(db, candidate) else {
                let existing = try await store.findSame(db, as: candidate)
                throw TransitError.favoriteExists(existing?.id ?? "")
            }
            return inserted
        }
        return (record, Self.name(of: record, in: current))
    }

    /// The routes a stop favourite is narrowed to, each one that serves the stop (sorted,
    /// without repeats); a route that does not is a field error, not a silent no-op.
    static func checkRoutes(_ routes: [String], at stopID: String, in current: TransitSnapshot) throws -> [String] {
        let unique = Array(Set(routes)).sorted()
        var errors = FieldValidator()
        if unique.isEmpty { errors.fail("route_ids", "give at least one route, or null for every route") }
        for route in unique {
            let serves = current.feeds.contains { feed in
                feed.timetable.routesByID[route] != nil
                    && AlertReach(entities: [.init(routeID: route)], timetable: feed.timetable).stops[stopID] != nil
            }
            if !serves { errors.fail("route_ids", "route \(route.prefix(200)) does not serve stop \(stopID.prefix(200))") }
        }
        try errors.validate()
        return unique
    }

    /// Changes a favourite's label, switch or place; a new `sortOrder` moves it there and
    /// renumbers the list 0, 1, 2, ….
    /// `routeIDs` narrows a stop favourite (`.some(nil)`: every route again).
    public func update(
        userID: String, id: String, label: String??, notificationsEnabled: Bool?, sortOrder: Int?, routeIDs: [String]?? = nil
    ) async throws -> (FavoriteRecord, String?) {
        let now = nowMs
        let current = served.snapshot
        let record = try await database.transaction { [store] db -> FavoriteRecord in
            guard var record = try await store.find(db, id: id, userID: userID) else { throw TransitError.favoriteNotFound }
            if let routeIDs {
                guard record.kind == .stop else {
                    var errors = FieldValidator()
                    errors.fail("route_ids", "only a stop favourite is narrowed to routes")
                    try errors.validate()
                    return record
                }
                record.routeIDs = try routeIDs.map { try Self.checkRoutes($0, at: record.stopID, in: current) }
            }
            if let label { record.label = label }
            if let notificationsEnabled { record.notificationsEnabled = notificationsEnabled }
            record.updatedAt = now
            try await store.update(db, record)
            if let sortOrder {
                var list = try await store.list(db, userID: userID).map(\.id).filter { $0 != id }
                list.insert(id, at: max(0, min(sortOrder, list.count)))
                for (index, favorite) in list.enumerated() {
                    try await store.setOrder(db, id: favorite, userID: userID, sortOrder: index, now: now)
                }
                record.sortOrder = list.firstIndex(of: id)!
            }
            return record
        }
        return (record, Self.name(of: record, in: current))
    }

    /// Removes a favourite and closes the gap in the order.
    public func delete(userID: String, id: String) async throws {
        let now = nowMs
        try await database.transaction { [store] db in
            guard try await store.delete(db, id: id, userID: userID) else { throw TransitError.favoriteNotFound }
            for (index, favorite) in try await store.list(db, userID: userID).enumerated() where favorite.sortOrder != index {
                try await store.setOrder(db, id: favorite.id, userID: userID, sortOrder: index, now: now)
            }
        }
    }
}
