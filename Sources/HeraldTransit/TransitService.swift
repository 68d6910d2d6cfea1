import HeraldCore
import HeraldNotifications
import HeraldRealtime
import HeraldStorage
import Logging

/// The transit module of one node, composed: the owners of its concerns, built once and
/// wired in layers, so no owner holds one that holds it (no reference cycles).
///
/// The layers, bottom up: `ServedFeeds` (what this node serves: the snapshot every answer
/// reads, swapped whole under one gate) with the `$transit` room (`TransitAnnouncements`) and
/// the alert-intake signal (`AlertIntake`); above them `loader` (loading what the database
/// serves), `feeds` (imports and feed files), `realtime` (GTFS-Realtime intake), `alerts`
/// (service alerts read and posted), `favorites` and `planning`, each owning its store.
/// Callers use the owners directly (`transit.favorites.add(…)`); this type only builds them
/// and keeps what several owners or callers share (configuration, database, clock, hub,
/// fetcher, statistics, live updates).
public final class TransitService: Sendable {
    public let config: TransitConfig
    public let database: any Database
    public let clock: any HeraldClock
    public let logger: Logger
    public let hub: RealtimeHub
    /// Downloads feeds and polls realtime sources (a `Service`: its HTTP client shuts down with the server).
    public let fetcher: FeedFetcher
    public let statistics: TransitStatistics
    public let live: LiveUpdates
    /// Raised when alerts may have changed on this node (the alert pusher wakes on it).
    public let alertIntake: AlertIntake

    public let served: ServedFeeds
    public let loader: TransitLoader
    public let feeds: TransitFeeds
    public let realtime: TransitRealtime
    public let alerts: TransitAlerts
    public let favorites: TransitFavorites
    public let planning: TransitPlanning

    public init(
        config: TransitConfig, database: any Database, hub: RealtimeHub, liveActivities: LiveActivityService? = nil, clock: any HeraldClock,
        logger: Logger
    ) {
        let fetcher = FeedFetcher()
        let importer = FeedImporter(database: database, config: config, fetcher: fetcher, clock: clock, logger: logger)
        let statistics = TransitStatistics()
        let live = LiveUpdates(hub: hub, clock: clock, planner: config.planner)
        let alertIntake = AlertIntake()
        let announcements = TransitAnnouncements(hub: hub, logger: logger)
        let served = ServedFeeds(
            config: config, clock: clock, logger: logger, live: live, boards: DepartureBoards(liveActivities: liveActivities, logger: logger))
        self.config = config
        self.database = database
        self.clock = clock
        self.logger = logger
        self.hub = hub
        self.fetcher = fetcher
        self.statistics = statistics
        self.live = live
        self.alertIntake = alertIntake
        self.served = served
        loader = TransitLoader(
            config: config, database: database, clock: clock, logger: logger, importer: importer, statistics: statistics, served: served,
            announcements: announcements, alertIntake: alertIntake)
        feeds = TransitFeeds(
            config: config, database: database, clock: clock, logger: logger, fetcher: fetcher, importer: importer, statistics: statistics,
            served: served, announcements: announcements)
        realtime = TransitRealtime(
            config: config, database: database, clock: clock, logger: logger, fetcher: fetcher, statistics: statistics, served: served,
            announcements: announcements, alertIntake: alertIntake)
        alerts = TransitAlerts(database: database, clock: clock, served: served, alertIntake: alertIntake)
        favorites = TransitFavorites(database: database, clock: clock, served: served)
        planning = TransitPlanning(config: config, served: served, statistics: statistics)
    }

    /// The feeds as they are now (`served.snapshot`); take it once per answer. Kept here
    /// because nearly every reader of the module (routes, channels, the pusher, metrics)
    /// wants only this.
    public var snapshot: TransitSnapshot { served.snapshot }

    /// Registered for `departures` in the composition root.
    public var liveActivitySource: any LiveActivitySource { DepartureActivitySource(served: served, clock: clock) }
}
