/// The timetable as the journey planner reads it, built once per feed version and shared by
/// every query: trips grouped into patterns (trips of one route that stop at the same stops in
/// the same order with the same boarding and alighting rules, and never overtake each other),
/// each pattern's times as one flat array, the patterns serving each stop, and the footpaths
/// between stops.
///
/// Why patterns: RAPTOR scans a pattern stop by stop and, at each stop, needs "the earliest
/// trip of this pattern leaving after t", a binary search when the trips are sorted and do
/// not overtake (FIFO). Trips that would overtake go into a pattern of their own.
public struct TransitNetwork: Sendable {
    public struct Pattern: Sendable {
        public let route: Int32
        public let stops: [Int32]
        /// Trip indexes, sorted by departure (FIFO at every stop).
        public let trips: [Int32]
        /// Row-major, trips × stops: seconds since the service day's start.
        let arrivals: [Int32]
        let departures: [Int32]
        /// Whether boarding / alighting is allowed at each stop (pickup_type / drop_off_type 1 = no).
        let canBoard: [Bool]
        let canAlight: [Bool]

        func arrival(trip row: Int, at index: Int) -> Int32 { arrivals[row * stops.count + index] }
        func departure(trip row: Int, at index: Int) -> Int32 { departures[row * stops.count + index] }
    }

    public struct Footpath: Sendable, Equatable {
        public let to: Int32
        public let seconds: Int32
    }

    public let patterns: [Pattern]
    /// For each stop: (pattern, position of the stop in it).
    let patternsAtStop: [[(pattern: Int32, index: Int32)]]
    public let footpaths: [[Footpath]]
    public let walking: WalkingRules

    public var stopCount: Int { footpaths.count }

    public init(timetable: Timetable, walking: WalkingRules = WalkingRules()) {
        let feed = timetable.feed
        let times = feed.stopTimes
        self.walking = walking

        // Group trips by route and stop sequence, then split into FIFO patterns.
        // Trips that stop at the same stops but allow boarding or alighting at different ones
        // are different patterns, so a pattern's rules are its every trip's.
        struct Key: Hashable {
            let route: Int32
            let stops: [Int32]
            let rules: [UInt8]
        }
        var groups: [Key: [Int32]] = [:]
        for trip in 0..<feed.trips.count {
            let range = times.range(trip: Int32(trip))
            guard range.count >= 2 else { continue }
            let rules = range.map { (times.pickupType[$0] == 1 ? 1 : 0) | (times.dropOffType[$0] == 1 ? 2 : 0) as UInt8 }
            groups[Key(route: feed.trips[trip].route, stops: range.map { times.stop[$0] }, rules: rules), default: []].append(Int32(trip))
        }
        var patterns: [Pattern] = []
        for (key, trips) in groups.sorted(by: { ($0.key.route, $0.key.stops.first ?? 0, $0.value[0]) < ($1.key.route, $1.key.stops.first ?? 0, $1.value[0]) }) {
            let ordered = trips.sorted { times.departure[Int(times.tripStart[Int($0)])] < times.departure[Int(times.tripStart[Int($1)])] }
            // Greedy: each trip joins the first sub-pattern whose last trip it never overtakes.
            var lanes: [[Int32]] = []
            for trip in ordered {
                let start = Int(times.tripStart[Int(trip)])
                if let lane = lanes.firstIndex(where: { lane in
                    let last = Int(times.tripStart[Int(lane.last!)])
                    return (0..<key.stops.count).allSatisfy { times.departure[last + $0] <= times.departure[start + $0] && times.arrival[last + $0] <= times.arrival[start + $0] }
                }) {
                    lanes[lane].append(trip)
                } else {
                    lanes.append([trip])
                }
            }
            for lane in lanes {
                var arrivals: [Int32] = []
                var departures: [Int32] = []
                arrivals.reserveCapacity(lane.count * key.stops.count)
                departures.reserveCapacity(lane.count * key.stops.count)
                for trip in lane {
                    let start = Int(times.tripStart[Int(trip)])
                    for index in 0..<key.stops.count {
                        arrivals.append(times.arrival[start + index])
                        departures.append(times.departure[start + index])
                    }
                }
                let canBoard = key.rules.map { $0 & 1 == 0 }
                let canAlight = key.rules.map { $0 & 2 == 0 }
                patterns.append(Pattern(route: key.route, stops: key.stops, trips: lane, arrivals: arrivals, departures: departures, canBoard: canBoard, canAlight: canAlight))
            }
        }
        var atStop = [[(pattern: Int32, index: Int32)]](repeating: [], count: feed.stops.count)
        for (number, pattern) in patterns.enumerated() {
            for (index, stop) in pattern.stops.enumerated() { atStop[Int(stop)].append((Int32(number), Int32(index))) }
        }
        self.patterns = patterns
        patternsAtStop = atStop

        // Footpaths: transfers.txt first (type 2 with its minimum time; type 3 forbids), then
        // every stop within walking distance that the feed did not name.
        var paths = [[Footpath]](repeating: [], count: feed.stops.count)
        var named = Set<[Int32]>()
        var forbidden = Set<[Int32]>()
        for transfer in feed.transfers where transfer.fromTripID == nil && transfer.toTripID == nil && transfer.fromRouteID == nil {
            guard let fromID = transfer.fromStopID, let toID = transfer.toStopID, let from = timetable.stopsByID[fromID],
                let to = timetable.stopsByID[toID], from != to
            else { continue }
            if transfer.transferType == 3 {
                forbidden.insert([from, to])
                continue
            }
            let seconds = Int32(transfer.minTransferTime ?? Int(walking.minimumChangeSeconds))
            paths[Int(from)].append(Footpath(to: to, seconds: seconds))
            named.insert([from, to])
        }
        if walking.maxTransferMeters > 0 {
            for (index, stop) in feed.stops.enumerated() {
                guard let latitude = stop.latitude, let longitude = stop.longitude else { continue }
                for (other, meters) in timetable.grid.nearby(latitude: latitude, longitude: longitude, radiusMeters: walking.maxTransferMeters, limit: 64)
                where Int(other) != index && !named.contains([Int32(index), other]) && !forbidden.contains([Int32(index), other]) {
                    paths[index].append(Footpath(to: other, seconds: max(walking.seconds(meters: meters), walking.minimumChangeSeconds)))
                }
            }
        }
        footpaths = paths
    }

    /// Bytes held per stop time (the pattern arrays), for the memory figure.
    public var bytesPerStopTime: Double {
        let stopTimes = patterns.reduce(0) { $0 + $1.arrivals.count }
        let bytes = patterns.reduce(0) { $0 + $1.arrivals.capacity * 4 + $1.departures.capacity * 4 + $1.trips.capacity * 4 + $1.stops.capacity * 4 + $1.canBoard.capacity * 2 }
        return stopTimes == 0 ? 0 : Double(bytes) / Double(stopTimes)
    }
}
