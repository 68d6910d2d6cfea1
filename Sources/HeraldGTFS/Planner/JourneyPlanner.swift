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
    /// The service days met so far, each with its runs only, and the searches' buffers:
    /// shared by every query on this feed version, thread-safe.
    let serviceDays: ServiceDayCache
    let buffers: RaptorBufferPool

    public init(network: TransitNetwork, timetable: Timetable) {
        self.network = network
        self.timetable = timetable
        serviceDays = ServiceDayCache()
        buffers = RaptorBufferPool()
    }

    /// The Pareto-optimal journeys (fewest rides first), empty when none exists within
    /// `maxTransfers` and the service days around `departAt`.
    public func plan(_ query: JourneyQuery) -> [Journey] {
        let network = network
        let calendar = timetable.calendar
        var search = RaptorSearch(network: network, timetable: timetable, query: query, buffers: buffers.take()) { day in
            serviceDays.runs(day: day) { ServiceDayRuns(network: network, calendar: calendar, day: day) }
        }
        let journeys = search.run()
        buffers.give(search.takeBuffers())
        return journeys
    }
}
