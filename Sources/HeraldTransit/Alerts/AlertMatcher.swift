import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage

/// Who a service alert reaches now: the favourites at the stops and routes it touches, less
/// what their users muted (`AlertAudience`), with what its push says about where.
///
/// Why apart from `AlertPusher`: matching reads the timetables and the favourites and mutes
/// tables, and knows nothing of versions, leases or batches; the pusher asks it once per
/// version it claims.
struct AlertMatcher: Sendable {
    let transit: TransitService
    let mutes = AlertMuteStore()

    /// Who an alert reaches now, and what its push says about where.
    struct Target: Sendable {
        var users: [String: [String]]
        var line: String?
        var routeID: String?
        var stopIDs: [String]
        /// For a delay alert, how late its runs are (`AlertDelay`).
        var delayMinutes: Int?
    }

    func audience(_ alert: ServiceAlert, now: Int64) async throws -> Target {
        let snapshot = transit.snapshot
        let feeds = snapshot.feeds.filter { alert.feedName == nil || $0.name == alert.feedName }
        var reach = AlertReach()
        var line: String?
        var delayMinutes: Int?
        for feed in feeds {
            let part = AlertReach(entities: alert.entities, timetable: feed.timetable)
            reach.merge(part)
            if line == nil { line = Self.line(alert, feed.timetable) }
            if delayMinutes == nil, alert.effect == "SIGNIFICANT_DELAYS" {
                delayMinutes = AlertDelay.minutes(entities: alert.entities, timetable: feed.timetable, overlay: feed.overlay)
            }
        }
        let stopIDs = Array(Set(alert.entities.compactMap(\.stopID))).sorted()
        let routeID = alert.entities.lazy.compactMap { $0.routeID ?? $0.trip?.routeID }.first ?? reach.routeIDs.first
        guard !reach.isEmpty else { return Target(users: [:], line: line, routeID: routeID, stopIDs: stopIDs, delayMinutes: delayMinutes) }
        let reachedStops = Array(reach.stops.keys)
        let reachedRoutes = reach.routeIDs
        let (favorites, userMutes) = try await transit.database.withConnection { [transit, mutes] db in
            let favorites =
                try await transit.favorites.store.atStops(db, stopIDs: reachedStops)
                + transit.favorites.store.ofRoutes(db, routeIDs: reachedRoutes)
            let users = Array(Set(favorites.map(\.userID)))
            var byUser: [String: AlertAudience.Mutes] = [:]
            for mute in try await mutes.active(db, userIDs: users, now: now) {
                switch mute.kind {
                case .alert: byUser[mute.userID, default: .init()].alerts.insert(mute.entityID)
                case .route: byUser[mute.userID, default: .init()].routes.insert(mute.entityID)
                case .stop: byUser[mute.userID, default: .init()].stops.insert(mute.entityID)
                }
            }
            return (favorites, byUser)
        }
        let audience = AlertAudience(reach: reach, favorites: favorites, mutes: userMutes, alertID: alert.id, critical: alert.severity == .critical)
        return Target(users: audience.users, line: line, routeID: routeID, stopIDs: stopIDs, delayMinutes: delayMinutes)
    }

    /// What the title names: the alert's first route (short name, else long name), else its
    /// first stop, else the agency.
    static func line(_ alert: ServiceAlert, _ t: Timetable) -> String? {
        for entity in alert.entities {
            if let id = entity.routeID ?? entity.trip?.routeID, let route = t.routesByID[id] {
                let r = t.feed.routes[Int(route)]
                return r.shortName ?? r.longName ?? r.id
            }
            if let tripID = entity.trip?.tripID, let trip = t.tripsByID[tripID] {
                let r = t.feed.routes[Int(t.feed.trips[Int(trip)].route)]
                return r.shortName ?? r.longName ?? r.id
            }
        }
        for entity in alert.entities {
            if let id = entity.stopID, let stop = t.stopsByID[id] { return t.feed.stops[Int(stop)].name ?? id }
        }
        return t.feed.agencies.first?.name
    }
}
