import HeraldGTFS

/// One loaded feed version with the realtime laid over it.
public struct LoadedFeed: Sendable {
    public let name: String
    public let version: FeedVersionRecord
    public let timetable: Timetable
    public var overlay: RealtimeOverlay
    public var realtime: RealtimeFreshness
    /// The journey planner over this version (its network built once, with the version).
    public let planner: JourneyPlanner?
    /// The version's fares (fare_attributes.txt, fare_rules.txt), for planned itineraries.
    public let fares: FareTable
    /// The version's GTFS Fares v2 (fare_products.txt, fare_leg_rules.txt, …): used instead
    /// of `fares` when the feed has fare leg rules.
    public let faresV2: FaresV2

    public init(
        name: String, version: FeedVersionRecord, timetable: Timetable, planner: JourneyPlanner? = nil, overlay: RealtimeOverlay = .empty,
        realtime: RealtimeFreshness = .none
    ) {
        self.name = name
        self.version = version
        self.timetable = timetable
        self.planner = planner
        fares = FareTable(feed: timetable.feed)
        faresV2 = FaresV2(timetable: timetable)
        self.overlay = overlay
        self.realtime = realtime
    }
}

/// How fresh a feed's realtime data is, source by source.
///
/// Why per source: a feed often has several (trip updates from one URL, vehicle positions
/// from another, a backend posting alerts). Judged by the newest of them, a dead source
/// hid behind a live one and its old predictions kept being applied; now each source is
/// judged by its own data time, a stale one's predictions are left out of the overlay
/// (`ServedFeeds.rebuildOverlays`), and the feed counts as stale while any source is.
public struct RealtimeFreshness: Sendable, Equatable {
    /// Whether realtime is expected (a source is configured or has posted).
    public var expected: Bool
    /// The newest data's time (its header timestamp, else when it arrived), epoch ms.
    public var dataTime: Int64?
    /// Each source's data time, epoch ms.
    public var sources: [String: Int64]

    public init(expected: Bool, dataTime: Int64?, sources: [String: Int64] = [:]) {
        self.expected = expected
        self.dataTime = dataTime
        self.sources = sources
    }

    public static let none = RealtimeFreshness(expected: false, dataTime: nil)

    /// The sources whose data is older than `staleAfterMs`, by name.
    public func staleSources(now: Int64, staleAfterMs: Int64) -> [String] {
        sources.filter { Self.isStale($0.value, now: now, staleAfterMs: staleAfterMs) }.keys.sorted()
    }

    /// Stale: realtime is expected and there is none, or some source's is older than `staleAfterMs`.
    public func isStale(now: Int64, staleAfterMs: Int64) -> Bool {
        guard expected else { return false }
        guard let dataTime else { return true }
        if sources.isEmpty { return Self.isStale(dataTime, now: now, staleAfterMs: staleAfterMs) }
        return !staleSources(now: now, staleAfterMs: staleAfterMs).isEmpty
    }

    public static func isStale(_ dataTime: Int64, now: Int64, staleAfterMs: Int64) -> Bool {
        now - dataTime > staleAfterMs
    }
}

/// What every answer reads: the feeds as they are at one moment. Taken once per request,
/// so an answer never mixes two versions of a feed.
public struct TransitSnapshot: Sendable {
    public var feeds: [LoadedFeed]

    public init(feeds: [LoadedFeed] = []) {
        self.feeds = feeds
    }

    public static let empty = TransitSnapshot()

    /// The feed holding a stop (the first, in configuration order, when ids are shared).
    public func stop(_ id: String) -> (feed: LoadedFeed, stop: Int32)? {
        for feed in feeds {
            if let stop = feed.timetable.stopsByID[id] { return (feed, stop) }
        }
        return nil
    }

    public func route(_ id: String) -> (feed: LoadedFeed, route: Int32)? {
        for feed in feeds {
            if let route = feed.timetable.routesByID[id] { return (feed, route) }
        }
        return nil
    }

    public func feed(_ name: String) -> LoadedFeed? {
        feeds.first { $0.name == name }
    }

    public var isEmpty: Bool { feeds.isEmpty }
}
