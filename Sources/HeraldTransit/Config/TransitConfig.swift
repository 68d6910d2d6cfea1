import HeraldCore
import HeraldGTFS

/// Transit: the GTFS feeds Herald serves, the GTFS-Realtime feeds laid over
/// them, and when realtime data counts as stale.
public struct TransitConfig: ConfigSection, Sendable, Equatable {
    /// Static GTFS feeds. One with a `url` is fetched at start and then every
    /// `refresh_interval_seconds` with a conditional GET; one without is imported by hand
    /// (`herald transit import`, `POST /api/v1/transit/feeds/{name}/import`).
    public var feeds: [FeedConfig] = []
    /// GTFS-Realtime feeds polled (TripUpdates, VehiclePositions, Alerts; one URL may carry all three).
    public var realtime: [RealtimeSourceConfig] = []
    /// Realtime data older than this (by the feed's own header timestamp, else its arrival)
    /// makes answers say `stale: true` with `cached_at` (the transit design's: two minutes).
    public var staleAfterSeconds = 120
    /// Largest static feed accepted (download, upload) and expanded (the zip's contents ×8).
    public var maxFeedBytes = 512 << 20
    /// Largest GTFS-Realtime message accepted (polled or posted).
    public var maxRealtimeBytes = 16 << 20
    /// The longest span of service days a version holds (10 years). A feed spanning more
    /// (`end_date` 9999-12-31: a calendar bomb that took 9 minutes to index) is held from a
    /// year before its import, or its first day if later; what lies beyond is dropped and
    /// the import report says so.
    public var maxServiceDays = 3_660
    /// Itineraries one user may follow at once (`itinerary:{id}`, on all their connections
    /// to a node): each followed itinerary is evaluated again when its rides' realtime data
    /// changes, with a replan when it is disrupted.
    public var maxFollowedItineraries = 10
    /// Deadline of one static feed download.
    public var downloadTimeoutSeconds = 300
    /// How often each node checks that it serves the feed versions the database names (an
    /// import on another node is also announced at once over the realtime bus).
    public var reloadIntervalSeconds = 30
    /// Service days the app's offline database holds from its import (`GET /gtfs/version`'s
    /// download); 0: none is made.
    public var offlineDays = 14
    /// Service alerts matched to favourites and pushed.
    public var alerts = AlertsConfig()

    /// Journey planning (`POST /api/v1/trips/plan`).
    public var planner = PlannerConfig()

    /// How the journey planner walks and how much one request may ask of it.
    public struct PlannerConfig: ConfigSection, Sendable, Equatable {
        /// Stops at most this far apart (straight line, metres) get a footpath between them,
        /// besides the transfers `transfers.txt` names.
        public var transferWalkMeters = 400.0
        /// Walking speed, metres per second (1.2 ≈ 4.3 km/h).
        public var walkingSpeed = 1.2
        /// Real walking distance ÷ straight-line distance (Herald has no street graph).
        public var detourFactor = 1.3
        /// The least time a change of vehicle at one stop takes.
        public var minimumChangeSeconds = 60
        /// The walk to the first stop and from the last when a request names none
        /// (`preferences.max_walking_distance`), and the most a request may name.
        public var defaultMaxWalkingMeters = 1000
        public var maxWalkingMetersLimit = 3000
        /// Itineraries answered when a request names no `max_itineraries`, and the most.
        public var defaultItineraries = 3
        public var maxItineraries = 8
        /// The most changes of vehicle in one itinerary.
        public var maxTransfers = 4
        /// The widest `depart_at`…`depart_until` window, and how far before `arrive_by` a
        /// departure is looked for.
        public var maxWindowMinutes = 180
        /// The work one plan may do: RAPTOR searches (a plain plan takes up to
        /// max_itineraries + 3, an `arrive_by` about 15, a departure window one per departure
        /// found, covered from its start as far as these reach).
        public var maxSearchesPerPlan = 48
        /// Threads journey searches run on (nil: one less than the CPUs, at least one), and
        /// how many searches may wait for one: beyond it, or after `max_queue_ms` waiting, a
        /// plan is answered 503 `PLANNER_BUSY` with `Retry-After`.
        public var threads: Int?
        public var maxQueued = 64
        public var maxQueueMs = 5_000

        public init() {}

        /// The walking rules the network is built with.
        public var walking: WalkingRules {
            var rules = WalkingRules()
            rules.maxTransferMeters = transferWalkMeters
            rules.metersPerSecond = walkingSpeed
            rules.detourFactor = detourFactor
            rules.minimumChangeSeconds = Int32(minimumChangeSeconds)
            return rules
        }

        func validationErrors() -> [FieldError] {
            var checks = ConfigChecks("transit.planner")
            checks.check((0...2000).contains(transferWalkMeters), "transfer_walk_meters", "must be between 0 and 2000")
            checks.check((0.3...3).contains(walkingSpeed), "walking_speed", "must be between 0.3 and 3 metres per second")
            checks.check((1...3).contains(detourFactor), "detour_factor", "must be between 1 and 3")
            checks.check((0...1800).contains(minimumChangeSeconds), "minimum_change_seconds", "must be between 0 and 1800")
            checks.check((100...10_000).contains(maxWalkingMetersLimit), "max_walking_meters_limit", "must be between 100 and 10000")
            checks.check(
                (0...maxWalkingMetersLimit).contains(defaultMaxWalkingMeters), "default_max_walking_meters", "must be between 0 and max_walking_meters_limit")
            checks.check((1...20).contains(maxItineraries), "max_itineraries", "must be between 1 and 20")
            checks.check((1...maxItineraries).contains(defaultItineraries), "default_itineraries", "must be between 1 and max_itineraries")
            checks.check((0...8).contains(maxTransfers), "max_transfers", "must be between 0 and 8")
            checks.check((16...1_000).contains(maxSearchesPerPlan), "max_searches_per_plan", "must be between 16 and 1000")
            if let threads { checks.check((1...256).contains(threads), "threads", "must be between 1 and 256") }
            checks.check((1...100_000).contains(maxQueued), "max_queued", "must be between 1 and 100000")
            checks.check((10...600_000).contains(maxQueueMs), "max_queue_ms", "must be between 10 and 600000")
            checks.check((10...720).contains(maxWindowMinutes), "max_window_minutes", "must be between 10 and 720")
            return checks.errors
        }
    }

    /// The alert push pipeline.
    public struct AlertsConfig: ConfigSection, Sendable, Equatable {
        /// Match new and changed alerts to favourites and push them.
        public var push = true
        /// What happens to a push quiet hours held back: `digest` (one summary push when the
        /// quiet hours end, for the alerts still in force) or `drop` (the inbox keeps it).
        public var quietHours = AlertQuietHours.digest
        /// The push's `deep_link`; `{alert_id}` is replaced.
        public var deepLink = "transitapp://alerts/{alert_id}"
        /// Send `title-loc-key`/`loc-key` (ALERT_TITLE_<EFFECT>) for the app's Localizable.strings.
        public var localized = true
        /// A node's hold on one alert version; another node resumes it after this.
        public var leaseSeconds = 60
        /// Users written to the notification outbox per transaction.
        public var batchSize = 500
        /// Batches of one alert written at once: each is a round trip chain to the database
        /// (once-only rows, routing, the outbox), so on PostgreSQL one at a time left the node
        /// idle waiting (issue 37). On SQLite they share the one writer anyway.
        public var batchesInFlight = 4
        /// How long MUTE_24H silences a route or stop.
        public var muteHours = 24
        /// One sounding push per rider per alert within this window: later versions replace
        /// the inbox entry and the shown notification quietly (same collapse id, passive, no
        /// sound) unless the severity rises. 0: every version sounds.
        public var cooldownSeconds = 1800
        /// How often each node looks for alert versions to process (intake also wakes it).
        public var intervalSeconds = 5

        public init() {}

        func validationErrors() -> [FieldError] {
            var checks = ConfigChecks("transit.alerts")
            checks.check(!deepLink.isEmpty && deepLink.count <= 500, "deep_link", "must be 1 to 500 characters")
            checks.check((1...3600).contains(leaseSeconds), "lease_seconds", "must be between 1 and 3600")
            checks.check((1...5000).contains(batchSize), "batch_size", "must be between 1 and 5000")
            checks.check((1...64).contains(batchesInFlight), "batches_in_flight", "must be between 1 and 64")
            checks.check((1...720).contains(muteHours), "mute_hours", "must be between 1 and 720")
            checks.check((0...86_400).contains(cooldownSeconds), "cooldown_seconds", "must be between 0 and 86400")
            checks.check((1...3600).contains(intervalSeconds), "interval_seconds", "must be between 1 and 3600")
            return checks.errors
        }
    }

    /// A static feed; `name` has no default (validation names it missing).
    public struct FeedConfig: ConfigSection, Sendable, Equatable {
        public var name = ""
        public var url: String?
        public var refreshIntervalSeconds = 86_400
        /// Extra request headers (an agency's API key).
        public var headers: [String: String] = [:]
        /// A region: several agencies' feeds merged into this one (`FeedRegion`: ids become
        /// `part:id`, walks join their stops). Each part is fetched whole at every check; `url`
        /// is then unset.
        public var parts: [FeedPartConfig] = []

        public init() {}

        public init(name: String, url: String? = nil) {
            self.name = name
            self.url = url
        }
    }

    /// One agency's feed in a region (`FeedConfig.parts`).
    public struct FeedPartConfig: ConfigSection, Sendable, Equatable {
        public var name = ""
        public var url = ""
        public var headers: [String: String] = [:]

        public init() {}

        public init(name: String, url: String) {
            self.name = name
            self.url = url
        }
    }

    /// A GTFS-Realtime source; `name` and `url` have no default (validation names them missing).
    public struct RealtimeSourceConfig: ConfigSection, Sendable, Equatable {
        public var name = ""
        public var url = ""
        /// The static feed it describes (default: the first in `feeds`).
        public var feed: String?
        public var pollIntervalSeconds = 30
        public var timeoutSeconds = 10
        public var headers: [String: String] = [:]

        public init() {}

        public init(name: String, url: String, feed: String? = nil) {
            self.name = name
            self.url = url
            self.feed = feed
        }
    }

    public init() {}

    /// The feed a realtime source describes: its `feed`, else the first configured feed,
    /// else `default` (the name a hand import without a name uses).
    public func feedName(of source: RealtimeSourceConfig) -> String {
        source.feed ?? feeds.first?.name ?? Self.defaultFeedName
    }

    public static let defaultFeedName = "default"

    /// A feed or source name: 1–64 of a-z, 0-9, `-` and `_`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
    }

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("transit")
        var names: Set<String> = []
        for (index, feed) in feeds.enumerated() {
            let path = "feeds[\(index)]"
            checks.check(Self.isValidName(feed.name), path + ".name", "a name is 1 to 64 characters of a-z, 0-9, - and _")
            checks.check(names.insert(feed.name).inserted, path + ".name", "\(feed.name) appears twice")
            if let url = feed.url { checks.check(url.hasPrefix("https://") || url.hasPrefix("http://"), path + ".url", "must be an http(s) URL") }
            if !feed.parts.isEmpty { checks.check(feed.url == nil, path + ".url", "a region is fetched from its parts' URLs: set url or parts, not both") }
            var partNames: Set<String> = []
            for (number, part) in feed.parts.enumerated() {
                let partPath = path + ".parts[\(number)]"
                checks.check(Self.isValidName(part.name), partPath + ".name", "a name is 1 to 64 characters of a-z, 0-9, - and _")
                checks.check(partNames.insert(part.name).inserted, partPath + ".name", "\(part.name) appears twice")
                checks.check(part.url.hasPrefix("https://") || part.url.hasPrefix("http://"), partPath + ".url", "must be an http(s) URL")
            }
            checks.check(feed.refreshIntervalSeconds >= 5, path + ".refresh_interval_seconds", "must be at least 5")
        }
        var sources: Set<String> = []
        for (index, source) in realtime.enumerated() {
            let path = "realtime[\(index)]"
            checks.check(
                Self.isValidName(source.name) && !source.name.hasPrefix("push"), path + ".name",
                "a name is 1 to 64 characters of a-z, 0-9, - and _, not starting with push")
            checks.check(sources.insert(source.name).inserted, path + ".name", "\(source.name) appears twice")
            checks.check(source.url.hasPrefix("https://") || source.url.hasPrefix("http://"), path + ".url", "must be an http(s) URL")
            if let feed = source.feed { checks.check(names.contains(feed), path + ".feed", "no feed is named \(feed)") }
            checks.check((1...86_400).contains(source.pollIntervalSeconds), path + ".poll_interval_seconds", "must be between 1 and 86400")
            checks.check((1...300).contains(source.timeoutSeconds), path + ".timeout_seconds", "must be between 1 and 300")
        }
        checks.check((1...86_400).contains(staleAfterSeconds), "stale_after_seconds", "must be between 1 and 86400")
        checks.check((1 << 10...4 << 30).contains(maxFeedBytes), "max_feed_bytes", "must be between 1 KiB and 4 GiB")
        checks.check((1 << 10...1 << 30).contains(maxRealtimeBytes), "max_realtime_bytes", "must be between 1 KiB and 1 GiB")
        checks.check((31...36_600).contains(maxServiceDays), "max_service_days", "must be between 31 and 36600")
        checks.check((1...10_000).contains(maxFollowedItineraries), "max_followed_itineraries", "must be between 1 and 10000")
        checks.check((1...3600).contains(downloadTimeoutSeconds), "download_timeout_seconds", "must be between 1 and 3600")
        checks.check((1...3600).contains(reloadIntervalSeconds), "reload_interval_seconds", "must be between 1 and 3600")
        checks.check((0...366).contains(offlineDays), "offline_days", "must be between 0 and 366")
        checks.add(alerts.validationErrors())
        checks.add(planner.validationErrors())
        return checks.errors
    }
}

/// What happens to an alert push that quiet hours held back (`transit.alerts.quiet_hours`).
public enum AlertQuietHours: String, ConfigChoice, Equatable {
    /// One summary push when the quiet hours end, for the alerts still in force.
    case digest
    /// No push; the inbox keeps the alert.
    case drop
}
