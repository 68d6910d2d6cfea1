import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import HeraldTransit
import Hummingbird
import Logging
import ServiceLifecycle

/// The transit module as the server runs it: the service and its loops (reload,
/// scheduled feed refresh, realtime polls, imports), the `stop:`/`route:` channels and
/// their live updates, and the routes.
public struct TransitModule: Sendable {
    public let service: TransitService
    public let imports: TransitImportRunner
    public let alerts: AlertPusher
    public let alertActions: AlertRiderActions
    let registry: DeviceRegistry
    let preferences: PreferenceEditor
    let services: [any Service]
    let clock: any HeraldClock
    let publicURL: String?

    init(
        config: HeraldConfig, database: any Database, realtime: RealtimeGateway, notifications: NotificationModule, schemaReady: StartupGate,
        clock: any HeraldClock, logger: Logger
    ) {
        let service = TransitService(
            config: config.transit, database: database, hub: realtime.hub, liveActivities: notifications.liveActivities, clock: clock, logger: logger)
        notifications.liveActivities.setSource(service.liveActivitySource, for: .departures)
        let imports = TransitImportRunner(feeds: service.feeds)
        let ready: @Sendable () async -> Bool = { await schemaReady.wait() }
        var services: [any Service] = [service.fetcher, service.loader.reloadLoop(ready: ready), imports]
        if let refresh = service.feeds.refreshLoop(ready: ready) { services.append(refresh) }
        services += service.realtime.pollLoops(ready: ready)
        let alerts = AlertPusher(transit: service, notifications: notifications.service, nodeID: realtime.nodeID, logger: logger)
        // Riders who never sent a time zone are where the served feed's agency is.
        notifications.service.timeZones.useFallback { [service] in service.snapshot.feeds.first?.timetable.zone.identifier }
        if config.transit.alerts.push {
            services.append(alerts.loop(ready: ready))
            if let digests = alerts.digest.loop(ready: ready) { services.append(digests) }
        }
        self.alerts = alerts
        self.alertActions = AlertRiderActions(transit: service, notifications: notifications.service)
        TransitChannels(service: service).install(socketIO: realtime.socketIO, native: realtime.native, channels: realtime.channels)
        self.service = service
        self.imports = imports
        self.registry = notifications.registry
        self.preferences = PreferenceEditor(service: notifications.service)
        self.services = services
        self.clock = clock
        self.publicURL = config.server.publicURL
    }

    static var operations: [APIOperation] { TransitRoutes.operations + [TransitRoutes.planOperation] }

    /// Routes taking bodies other than JSON, with their limits.
    static func binaryRoutes(_ config: TransitConfig) -> [String: BodyLimitMiddleware.BinaryBody] {
        [
            "POST /api/v1/transit/realtime": .init(mediaTypes: ["application/x-protobuf", "application/octet-stream"], maxBytes: config.maxRealtimeBytes),
            "POST /api/v1/transit/feeds/{name}/import": .init(mediaTypes: ["application/zip", "application/octet-stream"], maxBytes: config.maxFeedBytes),
        ]
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        TransitRoutes(
            transit: service, imports: imports, alertActions: alertActions, registry: registry, preferences: preferences, clock: clock, publicURL: publicURL
        )
        .addRoutes(to: api)
    }

    /// The transit counters in Prometheus text format.
    func renderMetrics() -> String {
        let s = service.statistics.snapshot
        var text = ""
        func counter(_ name: String, _ help: String, _ label: String, _ values: [String: Int]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
            for (key, value) in values.sorted(by: { $0.key < $1.key }) { text += "\(name){\(label)=\"\(key)\"} \(value)\n" }
        }
        counter("herald_transit_realtime_accepted_total", "GTFS-Realtime messages taken in.", "source", s.realtimeAccepted)
        counter("herald_transit_realtime_rejected_total", "GTFS-Realtime messages refused (the last good one keeps serving).", "source", s.realtimeRejected)
        counter("herald_transit_realtime_not_modified_total", "Realtime polls answered 304.", "source", s.realtimeNotModified)
        counter("herald_transit_realtime_fetch_failures_total", "Realtime polls that failed.", "source", s.realtimeFetchFailures)
        counter("herald_transit_imports_total", "Feed imports by outcome.", "status", s.imports)
        text += "# TYPE herald_transit_version_loads_total counter\nherald_transit_version_loads_total \(s.versionLoads)\n"
        func total(_ name: String, _ help: String, _ value: some Numeric) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        total("herald_transit_alert_versions_total", "New or changed service alerts this node recorded.", s.alertVersions)
        total("herald_transit_alerts_matched_total", "Alert versions this node matched to favourites.", s.alertsMatched)
        total("herald_transit_alert_matched_users_total", "Users those alert versions reached.", s.alertMatchedUsers)
        total("herald_transit_alert_match_seconds_total", "Time spent matching alerts (divide by _alerts_matched_total).", s.alertMatchSeconds)
        total("herald_transit_alert_pushes_queued_total", "Alert notifications written to the outbox (one per user per version).", s.alertPushesQueued)
        total("herald_transit_alert_digests_total", "Quiet-hours digests sent.", s.alertDigests)
        total("herald_transit_plans_shed_total", "Plans answered 503 PLANNER_BUSY.", s.plansShed)
        let snapshot = service.snapshot
        let now = clock.now().epochMilliseconds
        text += "# HELP herald_transit_stop_times Stop times of the feed version served.\n# TYPE herald_transit_stop_times gauge\n"
        for feed in snapshot.feeds { text += "herald_transit_stop_times{feed=\"\(feed.name)\"} \(feed.timetable.feed.stopTimes.count)\n" }
        text += "# HELP herald_transit_realtime_age_seconds Age of the newest realtime data per feed.\n# TYPE herald_transit_realtime_age_seconds gauge\n"
        for feed in snapshot.feeds {
            if let time = feed.realtime.dataTime { text += "herald_transit_realtime_age_seconds{feed=\"\(feed.name)\"} \(max(0, now - time) / 1000)\n" }
        }
        text +=
            "# HELP herald_transit_realtime_unmatched Realtime updates naming trips or stops the feed does not have.\n# TYPE herald_transit_realtime_unmatched gauge\n"
        for feed in snapshot.feeds { text += "herald_transit_realtime_unmatched{feed=\"\(feed.name)\"} \(feed.overlay.unmatched)\n" }
        return text
    }
}

/// `stop:{id}`, `route:{id}` and `itinerary:{id}` on both realtime protocols: any signed-in
/// user may follow a stop or route the served feeds have, or a planned itinerary; a native
/// `reconnect` gets the current board or status.
struct TransitChannels {
    let service: TransitService

    func install(socketIO: SocketIOServer, native: NativeRealtimeServer, channels: ChannelPolicy) {
        let service = self.service
        for prefix in ["stop", "route"] {
            channels.allow(prefix: prefix) { _, channel in
                let id = String(channel.dropFirst(prefix.count + 1))
                let snapshot = service.snapshot
                return prefix == "stop" ? snapshot.stop(id) != nil : snapshot.route(id) != nil
            }
            native.stateSync(prefix: prefix) { _, channel, _ in
                let entries = await LiveUpdates.entries(room: channel, snapshot: service.snapshot, now: Int64(service.clock.now().timeIntervalSince1970)) ?? []
                return [prefix == "stop" ? "departures" : "active_trips": .array(entries.map(\.value))]
            }
        }
        // A planned itinerary (`itinerary_id` of a plan): any signed-in user may follow one
        // that names runs of a served feed version.
        // At most `transit.max_followed_itineraries` per user on a node.
        channels.allow(prefix: "itinerary") { identity, channel in
            guard ItineraryID(String(channel.dropFirst(ItineraryWatch.prefix.count)))?.feed(in: service.snapshot) != nil else { return false }
            let limit = service.config.maxFollowedItineraries
            if service.hub.localRoomCount(ofUser: identity.userID, prefix: ItineraryWatch.prefix, besides: channel) >= limit {
                throw ChannelPolicy.Refusal(
                    code: .tooManyChannels,
                    message: "A user follows at most \(limit) itineraries at once (transit.max_followed_itineraries): unsubscribe from some first.")
            }
            return true
        }
        native.stateSync(prefix: "itinerary") { _, channel, _ in
            [
                "itinerary": await ItineraryWatch.status(
                    String(channel.dropFirst(ItineraryWatch.prefix.count)), snapshot: service.snapshot, planner: service.config.planner)
            ]
        }
    }
}
