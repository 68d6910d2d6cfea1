/// The timetable as the journey planner reads it, built once per feed version and shared by
/// every query: trips grouped into patterns (trips of one route that stop at the same stops in
/// the same order with the same boarding and alighting rules, and never overtake each other),
/// each pattern's times as one flat array, the patterns serving each stop, and the footpaths
/// between stops.
///
/// Why patterns: RAPTOR scans a pattern stop by stop and, at each stop, needs "the earliest
/// trip of this pattern leaving after t", a binary search when the trips are sorted and do
/// not overtake (FIFO). Trips that would overtake go into a pattern of their own. A
/// frequency-based trip (frequencies.txt) is one row per run, its stop times shifted.
public struct TransitNetwork: Sendable {
    /// A class, so a search holds one reference to a pattern it scans rather than copying its
    /// seven arrays (and their reference counts) each time.
    public final class Pattern: Sendable {
        public let route: Int32
        public let stops: [Int32]
        /// Trip indexes of the rows (runs), sorted by departure (FIFO at every stop).
        public let trips: [Int32]
        /// Each row's shift from its trip's stop times (a frequency run; 0 otherwise).
        public let shifts: [Int32]
        /// Seconds since the service day's start. Arrivals run by run (a ride reads one run's
        /// stops in turn); departures stop by stop (the search for a stop's earliest run is a
        /// binary search over contiguous memory).
        let arrivals: [Int32]
        let departures: [Int32]
        /// Whether boarding / alighting is allowed at each stop (pickup_type / drop_off_type 1 = no).
        let canBoard: [Bool]
        let canAlight: [Bool]

        init(route: Int32, stops: [Int32], trips: [Int32], shifts: [Int32], arrivals: [Int32], departures: [Int32], canBoard: [Bool], canAlight: [Bool]) {
            self.route = route
            self.stops = stops
            self.trips = trips
            self.shifts = shifts
            self.arrivals = arrivals
            self.departures = departures
            self.canBoard = canBoard
            self.canAlight = canAlight
        }

        // Positions are below the counts, so their products and sums cannot overflow.
        func arrival(trip row: Int, at index: Int) -> Int32 { arrivals[row &* stops.count &+ index] }
        func departure(trip row: Int, at index: Int) -> Int32 { departures[index &* trips.count &+ row] }
    }

    public struct Footpath: Sendable, Equatable {
        public let to: Int32
        public let seconds: Int32
    }

    /// A footpath as the search reads it: to a search stop.
    struct Walk: BitwiseCopyable {
        let to: Int32
        let seconds: Int32
    }

    public let patterns: [Pattern]
    /// For each stop: (pattern, position of the stop in it).
    let patternsAtStop: [[(pattern: Int32, index: Int32)]]
    public let footpaths: [[Footpath]]
    /// The search numbers stops its own way (`searchStop[feed stop]`, and back `feedStop`):
    /// along a curve through the map (Z-order over latitude and longitude), so stops a few
    /// hundred metres apart, those a footpath or a pattern's next stop reaches, sit near each
    /// other in its per-stop arrays and share their cache lines.
    let searchStop: [Int32]
    let feedStop: [Int32]
    /// Per search stop: whether a wheelchair user can use it (not marked inaccessible, itself
    /// or, when it says nothing, by its station).
    let searchStopAccessible: [Bool]
    /// The footpaths in flat arrays, by search stop, as the search reads them: search stop
    /// s's are at `footpathStart[s]..<footpathStart[s + 1]`, shortest first. A footpath
    /// is at most `longestFootpath` long (a transfer's `min_transfer_time` beyond it is cut),
    /// so a time on a search's axis plus a walk cannot wrap.
    let footpathStart: FrozenBuffer<Int32>
    let footpathWalks: FrozenBuffer<Walk>
    static let longestFootpath: Int32 = 86_400
    /// Every pattern's stops (search stops) and what a rider may do there
    /// (`RaptorSearch.boards`, `.alights`) in flat arrays: pattern p's at
    /// `patternStopStart[p]..<patternStopStart[p + 1]`.
    let patternStopStart: [Int32]
    /// Per pattern: whether every run's arrivals never decrease from stop to stop (as GTFS
    /// requires): a scan may then stop at the first stop a run reaches too late.
    let arrivalsInOrder: [Bool]
    let scanStops: FrozenBuffer<Int32>
    let scanRules: FrozenBuffer<UInt8>
    public let walking: WalkingRules
    /// Per trip: its service (calendar index) and whether it is marked wheelchair accessible.
    /// Copied out of the feed's records so the scan reads plain arrays.
    /// Where each run is: (pattern, row) by trip for timetabled trips (-1 for none), by
    /// (trip, shift) for frequency runs; the planner finds the runs realtime data changes.
    let tripPattern: [Int32]
    let tripRow: [Int32]
    let frequencyRuns: [TripInstance: (pattern: Int32, row: Int32)]
    let tripService: [Int32]
    let tripAccessible: [Bool]

    public var stopCount: Int { footpaths.count }

    /// The pattern and row of a run (the day is ignored), nil when the network has none.
    func location(of run: TripInstance) -> (pattern: Int32, row: Int32)? {
        if let found = frequencyRuns[TripInstance(trip: run.trip, day: 0, shift: run.shift)] { return found }
        let pattern = tripPattern[Int(run.trip)]
        return pattern < 0 || run.shift != 0 ? nil : (pattern, tripRow[Int(run.trip)])
    }

    /// Whether any trip stops at `stop` (a place a journey can start or end at).
    public func serves(_ stop: Int32) -> Bool { !patternsAtStop[Int(stop)].isEmpty }

    public init(timetable: Timetable, walking: WalkingRules = WalkingRules()) {
        let feed = timetable.feed
        let times = feed.stopTimes
        self.walking = walking
        tripService = feed.trips.map(\.service)
        tripAccessible = feed.trips.map { $0.wheelchairAccessible == 1 }
        let stopAccessible = feed.stops.map { stop in
            let own = stop.wheelchairBoarding
            if own == 0, stop.parent >= 0 { return feed.stops[Int(stop.parent)].wheelchairBoarding != 2 }
            return own != 2
        }

        // Group trips by route and stop sequence, then split into FIFO patterns.
        // Trips that stop at the same stops but allow boarding or alighting at different ones
        // are different patterns, so a pattern's rules are its every trip's.
        struct Key: Hashable {
            let route: Int32
            let stops: [Int32]
            let rules: [UInt8]
        }
        struct Run {
            let trip: Int32
            let shift: Int32
        }
        var frequencies: [Int32: [Frequency]] = [:]
        for frequency in feed.frequencies { frequencies[frequency.trip, default: []].append(frequency) }
        var groups: [Key: [Run]] = [:]
        for trip in 0..<feed.trips.count {
            let range = times.range(trip: Int32(trip))
            // A trip whose times could not be completed cannot be ridden.
            guard range.count >= 2, range.allSatisfy({ times.departure[$0] >= 0 && times.arrival[$0] >= 0 }) else { continue }
            let rules = range.map { (times.pickupType[$0] == 1 ? 1 : 0) | (times.dropOffType[$0] == 1 ? 2 : 0) as UInt8 }
            let key = Key(route: feed.trips[trip].route, stops: range.map { times.stop[$0] }, rules: rules)
            if let periods = frequencies[Int32(trip)] {
                let base = times.departure[range.lowerBound]
                for period in periods where period.headway > 0 {
                    for start in stride(from: period.start, to: period.end, by: Int(period.headway)) {
                        groups[key, default: []].append(Run(trip: Int32(trip), shift: start - base))
                    }
                }
            } else {
                groups[key, default: []].append(Run(trip: Int32(trip), shift: 0))
            }
        }
        func departure(_ run: Run, _ index: Int) -> Int32 { times.departure[Int(times.tripStart[Int(run.trip)]) + index] + run.shift }
        func arrival(_ run: Run, _ index: Int) -> Int32 { times.arrival[Int(times.tripStart[Int(run.trip)]) + index] + run.shift }
        var patterns: [Pattern] = []
        for (key, runs) in groups.sorted(by: {
            ($0.key.route, $0.key.stops.first ?? 0, $0.value[0].trip) < ($1.key.route, $1.key.stops.first ?? 0, $1.value[0].trip)
        }) {
            let ordered = runs.sorted { (departure($0, 0), $0.trip) < (departure($1, 0), $1.trip) }
            // Greedy: each run joins the first sub-pattern whose last run it never overtakes.
            var lanes: [[Run]] = []
            for run in ordered {
                if let lane = lanes.firstIndex(where: { lane in
                    let last = lane.last!
                    return (0..<key.stops.count).allSatisfy { departure(last, $0) <= departure(run, $0) && arrival(last, $0) <= arrival(run, $0) }
                }) {
                    lanes[lane].append(run)
                } else {
                    lanes.append([run])
                }
            }
            for lane in lanes {
                var arrivals: [Int32] = []
                var departures: [Int32] = []
                arrivals.reserveCapacity(lane.count * key.stops.count)
                departures.reserveCapacity(lane.count * key.stops.count)
                for run in lane {
                    for index in 0..<key.stops.count { arrivals.append(arrival(run, index)) }
                }
                for index in 0..<key.stops.count {
                    for run in lane { departures.append(departure(run, index)) }
                }
                let canBoard = key.rules.map { $0 & 1 == 0 }
                let canAlight = key.rules.map { $0 & 2 == 0 }
                patterns.append(
                    Pattern(
                        route: key.route, stops: key.stops, trips: lane.map(\.trip), shifts: lane.map(\.shift), arrivals: arrivals, departures: departures,
                        canBoard: canBoard, canAlight: canAlight))
            }
        }
        var atStop = [[(pattern: Int32, index: Int32)]](repeating: [], count: feed.stops.count)
        for (number, pattern) in patterns.enumerated() {
            for (index, stop) in pattern.stops.enumerated() { atStop[Int(stop)].append((Int32(number), Int32(index))) }
        }
        self.patterns = patterns
        patternsAtStop = atStop
        var tripPattern = [Int32](repeating: -1, count: feed.trips.count)
        var tripRow = [Int32](repeating: -1, count: feed.trips.count)
        var frequencyRuns: [TripInstance: (pattern: Int32, row: Int32)] = [:]
        for (number, pattern) in patterns.enumerated() {
            for (row, trip) in pattern.trips.enumerated() {
                if frequencies[trip] != nil {
                    frequencyRuns[TripInstance(trip: trip, day: 0, shift: pattern.shifts[row])] = (Int32(number), Int32(row))
                } else {
                    tripPattern[Int(trip)] = Int32(number)
                    tripRow[Int(trip)] = Int32(row)
                }
            }
        }
        self.tripPattern = tripPattern
        self.tripRow = tripRow
        self.frequencyRuns = frequencyRuns

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
            let seconds = Int32(clamping: min(transfer.minTransferTime ?? Int(walking.minimumChangeSeconds), Int(Self.longestFootpath)))
            paths[Int(from)].append(Footpath(to: to, seconds: seconds))
            named.insert([from, to])
        }
        if walking.maxTransferMeters > 0 {
            for (index, stop) in feed.stops.enumerated() {
                guard let latitude = stop.latitude, let longitude = stop.longitude else { continue }
                for (other, meters) in timetable.grid.nearby(latitude: latitude, longitude: longitude, radiusMeters: walking.maxTransferMeters, limit: 64)
                where Int(other) != index && !named.contains([Int32(index), other]) && !forbidden.contains([Int32(index), other]) {
                    paths[index].append(
                        Footpath(to: other, seconds: min(max(walking.seconds(meters: meters), walking.minimumChangeSeconds), Self.longestFootpath)))
                }
            }
        }
        paths = paths.map { list in list.sorted { ($0.seconds, $0.to) < ($1.seconds, $1.to) } }
        footpaths = paths
        let feedStop = Self.mapOrder(feed.stops)
        var searchStop = [Int32](repeating: 0, count: feedStop.count)
        for (search, stop) in feedStop.enumerated() { searchStop[Int(stop)] = Int32(search) }
        self.feedStop = feedStop
        self.searchStop = searchStop
        searchStopAccessible = feedStop.map { stopAccessible[Int($0)] }
        let searchPaths = feedStop.map { paths[Int($0)] }
        footpathStart = FrozenBuffer([0] + searchPaths.reduce(into: [Int32]()) { starts, list in starts.append((starts.last ?? 0) + Int32(list.count)) })
        footpathWalks = FrozenBuffer(searchPaths.flatMap { $0.map { Walk(to: searchStop[Int($0.to)], seconds: $0.seconds) } })
        patternStopStart = [0] + patterns.reduce(into: [Int32]()) { starts, pattern in starts.append((starts.last ?? 0) + Int32(pattern.stops.count)) }
        scanStops = FrozenBuffer(patterns.flatMap { $0.stops.map { searchStop[Int($0)] } })
        arrivalsInOrder = patterns.map { pattern in
            let stops = pattern.stops.count
            return pattern.trips.indices.allSatisfy { row in
                (1..<stops).allSatisfy { pattern.arrival(trip: row, at: $0 - 1) <= pattern.arrival(trip: row, at: $0) }
            }
        }
        scanRules = FrozenBuffer(
            patterns.flatMap { pattern in
                pattern.stops.indices.map { (pattern.canBoard[$0] ? RaptorSearch.boards : 0) | (pattern.canAlight[$0] ? RaptorSearch.alights : 0) }
            })
    }

    /// The feed's stops in Z-order of their coordinates (interleaved bits of latitude and
    /// longitude, scaled to the feed's extent); stops without coordinates last, in feed order.
    static func mapOrder(_ stops: [Stop]) -> [Int32] {
        let placed = stops.compactMap { stop in stop.latitude.flatMap { latitude in stop.longitude.map { (latitude, $0) } } }
        let south = placed.map(\.0).min() ?? 0
        let west = placed.map(\.1).min() ?? 0
        let height = max((placed.map(\.0).max() ?? 0) - south, 1e-9)
        let width = max((placed.map(\.1).max() ?? 0) - west, 1e-9)
        func spread(_ value: UInt64) -> UInt64 {
            var bits = value & 0xFFFF
            bits = (bits | (bits << 8)) & 0x00FF_00FF
            bits = (bits | (bits << 4)) & 0x0F0F_0F0F
            bits = (bits | (bits << 2)) & 0x3333_3333
            return (bits | (bits << 1)) & 0x5555_5555
        }
        let keys: [UInt64] = stops.map { stop in
            guard let latitude = stop.latitude, let longitude = stop.longitude else { return .max }
            let y = UInt64(((latitude - south) / height * 65_535).rounded())
            let x = UInt64(((longitude - west) / width * 65_535).rounded())
            return spread(y) << 1 | spread(x)
        }
        return stops.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }.map { Int32($0) }
    }

    /// Bytes held per stop time (the pattern arrays), for the memory figure.
    public var bytesPerStopTime: Double {
        let stopTimes = patterns.reduce(0) { $0 + $1.arrivals.count }
        let bytes = patterns.reduce(0) {
            $0 + $1.arrivals.capacity * 4 + $1.departures.capacity * 4 + $1.trips.capacity * 4 + $1.shifts.capacity * 4 + $1.stops.capacity * 4 + $1.canBoard
                .capacity * 2
        }
        return stopTimes == 0 ? 0 : Double(bytes) / Double(stopTimes)
    }
}
