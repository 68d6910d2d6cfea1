/// GTFS fares v1 (`fare_attributes.txt`, `fare_rules.txt`) for the rides of an itinerary:
/// the cheapest way to cover the rides with fares, each fare covering consecutive rides its
/// rules allow, within its number of transfers and its transfer duration — the reading
/// OpenTripPlanner's default fare service gives the files.
///
/// A fare's rules: it applies to a group of rides when some rule's route (if it names one)
/// is every ride's route and some rule's origin and destination zones (if named) are where
/// the group starts and ends; its `contains_id` zones, when it has any, must be exactly the
/// zones the group passes. A fare without rules applies everywhere (when the feed has a
/// single such fare, as many small feeds do). Fares of other currencies than the first
/// fare's are not mixed in.
public struct FareTable: Sendable {
    struct Fare: Sendable {
        let price: Double
        let currency: String
        /// nil: unlimited.
        let transfers: Int?
        let transferDuration: Int?
        let routes: Set<String>
        let pairs: [(origin: String?, destination: String?)]
        let contains: Set<String>
        let hasRules: Bool
    }

    /// One ride as fares see it.
    public struct Ride: Sendable {
        public var routeID: String
        public var originZone: String?
        public var destinationZone: String?
        /// Zones of every stop from boarding to alighting.
        public var zones: Set<String>
        public var departure: Int64

        public init(routeID: String, originZone: String?, destinationZone: String?, zones: Set<String>, departure: Int64) {
            self.routeID = routeID
            self.originZone = originZone
            self.destinationZone = destinationZone
            self.zones = zones
            self.departure = departure
        }
    }

    let fares: [Fare]

    public init(feed: TransitFeed) {
        var rules: [String: [FareRule]] = [:]
        for rule in feed.fareRules { rules[rule.fareID, default: []].append(rule) }
        let currency = feed.fareAttributes.first?.currency
        fares = feed.fareAttributes.filter { $0.currency == currency }.map { attribute in
            let own = rules[attribute.id] ?? []
            let pairs = own.filter { $0.originID != nil || $0.destinationID != nil }.map { (origin: $0.originID, destination: $0.destinationID) }
            return Fare(
                price: attribute.price, currency: attribute.currency, transfers: attribute.transfers, transferDuration: attribute.transferDuration,
                routes: Set(own.compactMap(\.routeID)), pairs: pairs, contains: Set(own.compactMap(\.containsID)), hasRules: !own.isEmpty)
        }
    }

    public init() {
        fares = []
    }

    /// Whether the feed has fares at all.
    public var isEmpty: Bool { fares.isEmpty }

    /// The cheapest total in minor units (cents: the price × 100) and the currency, nil when
    /// the feed has no fares or some ride is covered by none.
    public func fare(_ rides: [Ride]) -> (minor: Int, currency: String)? {
        guard !fares.isEmpty, !rides.isEmpty else { return nil }
        // cost[j]: the cheapest cover of rides[..<j].
        var cost = [Double](repeating: .infinity, count: rides.count + 1)
        cost[0] = 0
        for end in 1...rides.count {
            for start in 0..<end where cost[start] < .infinity {
                if let price = cheapest(rides[start..<end]) { cost[end] = min(cost[end], cost[start] + price) }
            }
        }
        guard cost[rides.count] < .infinity else { return nil }
        return (Int((cost[rides.count] * 100).rounded()), fares[0].currency)
    }

    /// The cheapest single fare covering `group`, nil when none does.
    func cheapest(_ group: ArraySlice<Ride>) -> Double? {
        guard let first = group.first, let last = group.last else { return nil }
        let routes = Set(group.map(\.routeID))
        let zones = group.reduce(into: Set<String>()) { $0.formUnion($1.zones) }
        var best: Double?
        for fare in fares {
            if let transfers = fare.transfers, group.count - 1 > transfers { continue }
            if let duration = fare.transferDuration, group.count > 1, last.departure - first.departure > Int64(duration) { continue }
            if fare.hasRules {
                if !fare.routes.isEmpty && !routes.isSubset(of: fare.routes) { continue }
                if !fare.pairs.isEmpty
                    && !fare.pairs.contains(where: {
                        ($0.origin == nil || $0.origin == first.originZone) && ($0.destination == nil || $0.destination == last.destinationZone)
                    })
                {
                    continue
                }
                if !fare.contains.isEmpty && zones != fare.contains { continue }
            } else if fares.count > 1 {
                continue
            }
            best = min(best ?? .infinity, fare.price)
        }
        return best
    }
}
