import Foundation
import HeraldCore
import HeraldGTFS
import HeraldStorage

/// Service alerts as riders read them: those of the GTFS-Realtime feeds and those backends
/// post (`POST /alerts`, stored in `transit_alerts`).
///
/// Why an owner of its own: posted alerts are the one alert table a request writes; reading
/// them together with the feeds' alerts, with one filter, is what `GET /alerts` and the alert
/// pusher both need. Pushing alerts to users is `AlertPusher`'s.
public final class TransitAlerts: Sendable {
    public struct AlertFilter: Sendable {
        public var routeID: String?
        public var stopID: String?
        public var severity: AlertSeverity?

        public init(routeID: String? = nil, stopID: String? = nil, severity: AlertSeverity? = nil) {
            self.routeID = routeID
            self.stopID = stopID
            self.severity = severity
        }
    }

    let database: any Database
    let clock: any HeraldClock
    let served: ServedFeeds
    let alertIntake: AlertIntake
    let alertStore = AlertStore()

    init(database: any Database, clock: any HeraldClock, served: ServedFeeds, alertIntake: AlertIntake) {
        self.database = database
        self.clock = clock
        self.served = served
        self.alertIntake = alertIntake
    }

    var nowMs: Int64 { clock.now().epochMilliseconds }

    /// Alerts in force now, newest data first for GTFS-RT, then posted ones by creation.
    /// A stop filter matches alerts naming the stop, its station or its platforms, and
    /// alerts on routes that serve it; a route filter matches alerts naming the route or one
    /// of its trips.
    public func current(_ filter: AlertFilter) async throws -> (alerts: [JSONValue], lastUpdated: Int64?) {
        let now = nowMs
        let current = served.snapshot
        var stopIDs: Set<String> = []
        var servingRoutes: Set<String> = []
        if let stopID = filter.stopID {
            stopIDs.insert(stopID)
            if let (feed, stop) = current.stop(stopID) {
                let stops = feed.timetable.feed.stops
                if stops[Int(stop)].parent >= 0 { stopIDs.insert(stops[Int(stops[Int(stop)].parent)].id) }
                for child in feed.timetable.childrenByStop[stop] ?? [] { stopIDs.insert(stops[Int(child)].id) }
                servingRoutes = Set(feed.timetable.routesByStop[Int(stop)].map { feed.timetable.feed.routes[Int($0)].id })
            }
        }
        func matches(routes: [String], stops: [String], severity: AlertSeverity) -> Bool {
            if let wanted = filter.severity, wanted != severity { return false }
            if let route = filter.routeID, !routes.contains(route) { return false }
            if filter.stopID != nil, !stops.contains(where: stopIDs.contains), !routes.contains(where: servingRoutes.contains) { return false }
            return true
        }
        var result: [JSONValue] = []
        var lastUpdated: Int64?
        for feed in current.feeds {
            for alert in feed.overlay.alerts where alert.isActive(at: now / 1000) {
                var routes = alert.informedEntities.compactMap(\.routeID)
                for entity in alert.informedEntities {
                    if let tripID = entity.trip?.tripID, let trip = feed.timetable.tripsByID[tripID] {
                        routes.append(feed.timetable.feed.routes[Int(feed.timetable.feed.trips[Int(trip)].route)].id)
                    }
                }
                let stops = alert.informedEntities.compactMap(\.stopID)
                guard matches(routes: routes, stops: stops, severity: AlertSeverity(gtfs: alert.severityLevel, effect: alert.effect)) else { continue }
                result.append(TransitJSON.alert(feed, alert))
            }
            if let time = feed.realtime.dataTime { lastUpdated = max(lastUpdated ?? time, time) }
        }
        let posted = try await database.withConnection { [alertStore] db in try await alertStore.current(db, now: now) }
        let zone = current.feeds.first?.timetable.zone
        for alert in posted where (alert.activeStart ?? 0) <= now {
            guard let severity = AlertSeverity(rawValue: alert.severity), matches(routes: alert.routeIDs, stops: alert.stopIDs, severity: severity) else {
                continue
            }
            result.append(TransitJSON.postedAlert(zone, alert))
            lastUpdated = max(lastUpdated ?? alert.updatedAt, alert.updatedAt)
        }
        return (result, lastUpdated)
    }

    /// A backend's alert, stored (or replacing the one with its id) and in `GET /alerts` at once.
    public func post(_ input: PostedAlertInput, by caller: String) async throws -> (record: PostedAlertRecord, created: Bool) {
        let current = served.snapshot
        var v = FieldValidator()
        for (index, route) in input.routeIDs.enumerated() where current.route(route) == nil && !current.isEmpty {
            v.fail("affected_routes[\(index)]", "no route has the id \(route)")
        }
        for (index, stop) in input.stopIDs.enumerated() where current.stop(stop) == nil && !current.isEmpty {
            v.fail("affected_stops[\(index)]", "no stop has the id \(stop)")
        }
        try v.validate()
        let now = nowMs
        func json(_ ids: [String]) -> String {
            var writer = JSONWriter()
            writer.write(.array(ids.map(JSONValue.string)))
            return writer.string
        }
        let record = PostedAlertRecord(
            id: input.id ?? Identifier.make("alert", length: 16), severity: input.severity.rawValue, header: input.header, description: input.description,
            cause: input.cause, effect: input.effect, url: input.url, affectedRoutes: json(input.routeIDs), affectedStops: json(input.stopIDs),
            activeStart: input.start, activeEnd: input.end, createdBy: caller, createdAt: now, updatedAt: now)
        let result = try await database.transaction { [alertStore] db in
            let existed = try await alertStore.find(db, id: record.id) != nil
            return (try await alertStore.upsert(db, record), !existed)
        }
        alertIntake.signal()
        return result
    }

    /// Backends' alerts whose period has not ended by `now` (epoch ms).
    public func posted(now: Int64) async throws -> [PostedAlertRecord] {
        try await database.withConnection { [alertStore] db in try await alertStore.current(db, now: now) }
    }
}
