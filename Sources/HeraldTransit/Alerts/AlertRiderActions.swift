import Foundation
import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldStorage

/// What a rider does with an alert push: open it (the transit design's read receipt) or mute it
/// (the SERVICE_ALERT category's MUTE_24H action).
///
/// Why an owner of its own: these run on a request, for one user, while the pusher's loop runs
/// on every node for every user; they share only the tables (the mutes the pusher reads when it
/// matches, the pushes it records, the versions it keeps), not the loop's lease or batching.
public final class AlertRiderActions: Sendable {
    let transit: TransitService
    let notifications: NotificationService
    let config: TransitConfig.AlertsConfig
    let versions = AlertVersionStore()
    let pushes = AlertPushStore()
    let mutes = AlertMuteStore()

    public init(transit: TransitService, notifications: NotificationService) {
        self.transit = transit
        self.notifications = notifications
        self.config = transit.config.alerts
    }

    var nowMs: Int64 { transit.clock.now().epochMilliseconds }

    /// Marks the user's pushes of the alert opened and their notifications read; returns the
    /// notification ids.
    ///
    /// An alert the user was never pushed (opened from the app's list, or from a digest
    /// that named several) has nothing to mark and answers the same: the app sends this
    /// for every alert it shows. Only an alert Herald never had is `ALERT_NOT_FOUND`.
    public func opened(userID: String, alertID: String) async throws -> [String] {
        let now = nowMs
        let ids = try await transit.database.transaction { [pushes] db -> [String]? in
            guard try await pushes.markOpened(db, alertID: alertID, userID: userID, now: now) else { return nil }
            return try await pushes.notifications(db, alertID: alertID, userID: userID)
        }
        guard let ids else {
            guard try await knownAlert(alertID) != nil else { throw TransitError.alertNotFound(alertID) }
            return []
        }
        _ = try await NotificationInbox(service: notifications).markRead(userID: userID, ids: ids)
        return ids
    }

    /// Mutes for `hours` (default `mute_hours`) what `scope` says (`AlertMuteScope`): this
    /// alert and its later versions (the default), or what it is about: the routes it names
    /// (a trip counts as its route); else the stops it names; else (an agency- or
    /// route-type-wide alert) the routes through which it reaches the user's favourites.
    public func mute(userID: String, alertID: String, hours: Int?, scope: AlertMuteScope = .alert) async throws -> [AlertMuteRecord] {
        guard let alert = try await knownAlert(alertID) else { throw TransitError.alertNotFound(alertID) }
        let now = nowMs
        let until = now + Int64(hours ?? config.muteHours) * 3_600_000
        if scope == .alert {
            let record = AlertMuteRecord(userID: userID, kind: .alert, entityID: alertID, until: until, alertID: alertID, createdAt: now)
            try await transit.database.transaction { [mutes] db in try await mutes.upsert(db, record) }
            return [record]
        }
        let snapshot = transit.snapshot
        var routes: Set<String> = Set(alert.entities.compactMap { $0.routeID ?? $0.trip?.routeID })
        for entity in alert.entities {
            guard let tripID = entity.trip?.tripID else { continue }
            for feed in snapshot.feeds {
                if let trip = feed.timetable.tripsByID[tripID] { routes.insert(feed.timetable.feed.routes[Int(feed.timetable.feed.trips[Int(trip)].route)].id) }
            }
        }
        var stops: Set<String> = routes.isEmpty ? Set(alert.entities.compactMap(\.stopID)) : []
        if routes.isEmpty && stops.isEmpty {
            var reach = AlertReach()
            for feed in snapshot.feeds where alert.feedName == nil || feed.name == alert.feedName {
                reach.merge(AlertReach(entities: alert.entities, timetable: feed.timetable))
            }
            let favorites = try await transit.favorites.list(userID: userID)
            let reachedRoutes = Set(reach.routeIDs)
            for favorite in favorites {
                if let route = favorite.record.routeID {
                    if reachedRoutes.contains(route) { routes.insert(route) }
                    continue
                }
                switch reach.stops[favorite.record.stopID] {
                case .routes(let ids)?: routes.formUnion(ids)
                case .direct?: stops.insert(favorite.record.stopID)
                case nil: break
                }
            }
        }
        let records =
            routes.sorted().map { AlertMuteRecord(userID: userID, kind: .route, entityID: $0, until: until, alertID: alertID, createdAt: now) }
            + stops.sorted().map { AlertMuteRecord(userID: userID, kind: .stop, entityID: $0, until: until, alertID: alertID, createdAt: now) }
        try await transit.database.transaction { [mutes] db in
            for record in records { try await mutes.upsert(db, record) }
        }
        return records
    }

    /// Ends the mutes an alert set for the user; throws `ALERT_NOT_FOUND` when it set none.
    public func unmute(userID: String, alertID: String) async throws {
        let removed = try await transit.database.withConnection { [mutes] db in try await mutes.delete(db, userID: userID, alertID: alertID) }
        if removed == 0 { throw TransitError.alertNotFound(alertID) }
    }

    /// The user's mutes in force.
    public func activeMutes(userID: String) async throws -> [AlertMuteRecord] {
        let now = nowMs
        return try await transit.database.withConnection { [mutes] db in try await mutes.active(db, userID: userID, now: now) }
    }

    /// The alert as last recorded, else as the feeds or backends have it now.
    func knownAlert(_ id: String) async throws -> ServiceAlert? {
        if let version = try await transit.database.withConnection({ [versions] db in try await versions.latest(db, alertID: id) }),
            let json = try? JSONDecoder().decode(JSONValue.self, from: Data(version.alert.utf8)), let alert = ServiceAlert(json: json)
        {
            return alert
        }
        for feed in transit.snapshot.feeds {
            if let alert = feed.overlay.alerts.first(where: { $0.id == id }) { return ServiceAlert(realtime: alert, feed: feed.name) }
        }
        return try await transit.alerts.posted(now: nowMs).first { $0.id == id }.map(ServiceAlert.init(posted:))
    }
}
