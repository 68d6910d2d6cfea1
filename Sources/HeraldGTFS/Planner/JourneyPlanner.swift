/// Round-based public transit routing (RAPTOR, Delling, Pajor and Werneck 2012) over a
/// `TransitNetwork`: round k finds the earliest arrival at every stop with at most k rides;
/// the answer is the Pareto set over arrival time and number of rides (each round that
/// reaches the destination earlier than every round before it adds one journey; a walk
/// alone, when the destination is within a footpath of the origin, is the first).
///
/// Why RAPTOR: it needs no preprocessing beyond the patterns (so a new feed version serves at
/// once), its memory is a few arrays per query, and it is what OpenTripPlanner and Transitous
/// (MOTIS) build on.
public struct JourneyPlanner: Sendable {
    public let network: TransitNetwork
    public let timetable: Timetable
    /// The service windows met so far (three days' runs each) and the searches' buffers:
    /// shared by every query on this feed version, thread-safe.
    let windows: ServiceWindowCache
    let buffers: RaptorBufferPool

    public init(network: TransitNetwork, timetable: Timetable) {
        self.network = network
        self.timetable = timetable
        windows = ServiceWindowCache()
        buffers = RaptorBufferPool()
    }

    /// The Pareto-optimal journeys (fewest rides first), empty when none exists within
    /// `maxTransfers` and the service days around `departAt`.
    public func plan(_ query: JourneyQuery) -> [Journey] {
        let window = window(around: query.departAt)
        let rounds = max(1, query.maxTransfers + 1)
        var search = RaptorSearch(
            network: network, timetable: timetable, window: window, query: query,
            buffers: buffers.take(stopCount: network.stopCount, laneCount: window.laneCount, rounds: rounds))
        // The search reads the window's memory through pointers: the window lives until it ends.
        let journeys = withExtendedLifetime(window) { search.run() }
        buffers.give(search.finish())
        return journeys
    }

    /// Builds the service window around `instant` now (a few milliseconds on a city's feed),
    /// so no query waits for it: a loader calls it for today as a feed version loads.
    public func prepare(around instant: Int64) {
        _ = window(around: instant)
    }

    /// Bytes held by the service window around `instant` (for the benchmarks).
    public func windowBytes(around instant: Int64) -> Int { window(around: instant).bytes }

    /// The three service days' runs around the local day of `instant`.
    func window(around instant: Int64) -> ServiceWindow {
        let day = timetable.zone.localDay(instant)
        return windows.window(day: day) { ServiceWindow(network: network, calendar: timetable.calendar, zone: timetable.zone, day: day) }
    }
}
