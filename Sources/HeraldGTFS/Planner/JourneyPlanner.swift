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

    public init(network: TransitNetwork, timetable: Timetable) {
        self.network = network
        self.timetable = timetable
    }

    /// The Pareto-optimal journeys (fewest rides first), empty when none exists within
    /// `maxTransfers` and the service days around `departAt`.
    public func plan(_ query: JourneyQuery) -> [Journey] {
        var search = RaptorSearch(network: network, timetable: timetable, query: query)
        return search.run()
    }
}
