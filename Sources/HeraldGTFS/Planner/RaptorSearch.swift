/// One query's rounds of RAPTOR over a `ServiceWindow`: per round, the earliest arrival at
/// each stop and how it was reached (`RaptorBuffers`, round × stop cells); the patterns to
/// scan; the journey found after each round. Times are seconds on the window's axis (32 bits;
/// a window spans three days), turned back into instants only for the journeys.
///
/// Why footpaths start from ride arrivals (`rideArrivals`, `rideLabels`) and not from the
/// round's best arrival: a stop improved by a walk must not start another walk, and a stop
/// first reached by a ride and then improved by a walk in the same round still has its ride
/// to walk on from.
///
/// Why two scans: without realtime, wheelchair filter or cancelled trips (the common query)
/// a lane's runs are in departure order at every stop and every one is rideable, so
/// `scanInOrder` finds a run with one binary search and carries no prediction through its
/// loop (copying an optional `TripPrediction` from one stop to the next was a third of the
/// scan's time); `scan` handles the rest.
struct RaptorSearch {
    enum Label {
        case none
        case origin(walk: Int32)
        case ride(pattern: Int32, row: Int32, day: Int32, boardIndex: Int32, alightIndex: Int32)
        case walk(from: Int32, seconds: Int32)

        var isRide: Bool {
            if case .ride = self { return true }
            return false
        }
    }

    /// Boarding and alighting bits of `TransitNetwork.scanRules`.
    static let boards: UInt8 = 1
    static let alights: UInt8 = 2
    static let unreached = Int32.max

    let network: TransitNetwork
    let timetable: Timetable
    let window: ServiceWindow
    let query: JourneyQuery
    let stopCount: Int
    let rounds: Int
    let usesRealtime: Bool
    /// Wheelchair filter or cancelled trips: a run may not be rideable.
    let filtered: Bool
    /// How late and how early (seconds) a predicted departure can be against the schedule,
    /// so the search for a run looks that far around the scheduled times.
    let late: Int32
    let early: Int32
    let change: Int32
    /// The query's departure on the window's axis.
    let departure: Int32
    let buffers: RaptorBuffers
    var queuedCount = 0
    /// Rounds whose bits may be set (the reset's range).
    var roundsWritten = 1
    /// The destination's stops (search stops) and the walk from each.
    var egress: [(stop: Int32, walk: Int32)] = []
    /// Runs the realtime data makes skip stops: ridden on their own each round (a lane's
    /// runs must serve every stop their pattern serves), and left out of their lanes.
    var detached: [(pattern: Int32, row: Int32, day: Int, prediction: TripPrediction)] = []
    /// The earliest arrival at the destination so far: nothing that reaches a stop later
    /// can improve on it (target pruning).
    var target = unreached

    init(network: TransitNetwork, timetable: Timetable, window: ServiceWindow, query: JourneyQuery, buffers: RaptorBuffers) {
        self.network = network
        self.timetable = timetable
        self.window = window
        self.query = query
        self.buffers = buffers
        stopCount = network.stopCount
        rounds = max(1, query.maxTransfers + 1)
        usesRealtime = !query.realtime.predictions.isEmpty
        filtered = query.wheelchairOnly || !query.cancelled.isEmpty
        late = usesRealtime ? query.realtime.lookbackSeconds : 0
        early = usesRealtime ? query.realtime.earlySeconds : 0
        // At most a day, like a footpath, so `ceiling` keeps every sum in range.
        change = min(max(network.walking.minimumChangeSeconds, 0), TransitNetwork.longestFootpath)
        departure = Self.axis(query.departAt - window.origin)
        if usesRealtime {
            for instance in query.realtime.runsSkippingStops where (window.firstDay...window.lastDay).contains(instance.day) {
                guard let (pattern, row) = network.location(of: instance), let prediction = query.realtime.predictions[instance] else { continue }
                detached.append((pattern, row, Int(instance.day - window.firstDay), prediction))
            }
        }
        for destination in query.destinations where destination.walkSeconds <= TransitNetwork.longestFootpath {
            let stop = network.searchStop[Int(destination.stop)]
            let walk = max(0, destination.walkSeconds)
            if let index = egress.firstIndex(where: { $0.stop == stop }) {
                egress[index].walk = min(egress[index].walk, walk)
            } else {
                egress.append((stop, walk))
            }
        }
    }

    /// The latest time a search keeps (about 34 years on the axis): every time from outside
    /// (a query's walk, a prediction's delay) is clamped to it, so adding a footpath (at most a
    /// day) or a change of vehicle (at most half an hour) to any time cannot wrap.
    static let ceiling: Int32 = 1 << 30

    /// A time on the axis, clamped to `ceiling`.
    static func axis(_ seconds: Int64) -> Int32 { Int32(clamping: max(min(seconds, Int64(ceiling)), -Int64(ceiling))) }

    /// The instant of a time on the axis.
    func instant(_ time: Int32) -> Int64 { window.origin + Int64(time) }

    mutating func run() -> [Journey] {
        var journeys: [Journey] = []
        for origin in query.origins where accessible(Int(network.searchStop[Int(origin.stop)])) && origin.walkSeconds <= TransitNetwork.longestFootpath {
            let stop = Int(network.searchStop[Int(origin.stop)])
            // A negative walk counts as none.
            let walk = max(0, origin.walkSeconds)
            let time = Self.axis(Int64(departure) + Int64(walk))
            if time < buffers.arrivals[stop] {
                buffers.arrivals[stop] = time
                buffers.best[stop] = time
                buffers.labels[stop] = .origin(walk: walk)
                buffers.rideArrivals[stop] = time
                buffers.rideLabels[stop] = .origin(walk: walk)
                mark(stop, round: 0, rode: true)
            }
        }
        // Footpaths from the origin stops (a query by stop id may start next door).
        relaxFootpaths(round: 0)
        // A walk alone, when the destination is a footpath (or nothing) away.
        if let reached = destinationArrival(round: 0) {
            target = reached.time
            if let journey = reconstruct(round: 0, stop: reached.stop, egress: reached.walk), !journey.legs.isEmpty { journeys.append(journey) }
        }
        for round in 1...rounds {
            roundsWritten = round + 1
            queueLanes(round: round)
            for entry in 0..<queuedCount {
                let lane = Int(buffers.queued[entry])
                let first = Int(buffers.queueIndex[lane])
                let last = Int(buffers.queueLast[lane])
                buffers.queueIndex[lane] = .max
                let pattern = Int(window.lanePatterns[lane])
                if let routes = query.routes, !routes.contains(network.patterns[pattern].route) { continue }
                if usesRealtime || filtered {
                    scan(lane: lane, pattern: pattern, from: first, round: round)
                } else {
                    scanInOrder(lane: lane, pattern: pattern, from: first, through: last, round: round)
                }
            }
            queuedCount = 0
            for (pattern, row, day, prediction) in detached { scan(detached: row, day: day, prediction, pattern: pattern, round: round) }
            relaxFootpaths(round: round)
            if let reached = destinationArrival(round: round), reached.time < target {
                target = reached.time
                if let journey = reconstruct(round: round, stop: reached.stop, egress: reached.walk) { journeys.append(journey) }
            }
            if !anyImproved(round: round) { break }
        }
        return journeys
    }

    /// Hands the buffers back, reset, for the next search (this one is done).
    mutating func finish() -> RaptorBuffers {
        buffers.reset(rounds: roundsWritten)
        roundsWritten = 0
        return buffers
    }

    /// Calls `body` with each stop of `bits` (a round's set), in stop order.
    @inline(__always)
    private func forEachStop(in bits: UnsafeMutablePointer<UInt64>, _ body: (Int) -> Void) {
        for word in 0..<buffers.words {
            var remaining = bits[word]
            while remaining != 0 {
                body(word << 6 | remaining.trailingZeroBitCount)
                remaining &= remaining &- 1
            }
        }
    }

    private func anyImproved(round: Int) -> Bool {
        let bits = buffers.improved + round * buffers.words
        return (0..<buffers.words).contains { bits[$0] != 0 }
    }

    /// The lanes through the stops the last round improved, each from the first of them to
    /// the last; a stop reached too late to beat the destination's best arrival queues none.
    private mutating func queueLanes(round: Int) {
        let lanes = window.stopLanes.base
        let laneStart = window.stopLaneStart.base
        let queueIndex = buffers.queueIndex
        let queueLast = buffers.queueLast
        let queued = buffers.queued
        var count = queuedCount
        let reached = buffers.arrivals + (round - 1) * stopCount
        let target = target
        forEachStop(in: buffers.improved + (round - 1) * buffers.words) { stop in
            // Reached no earlier than the destination's best arrival (found after the stop
            // was marked): nothing boarded there can help.
            guard reached[stop] < target else { return }
            for entry in Int(laneStart[stop])..<Int(laneStart[stop &+ 1]) {
                let lane = Int(lanes[entry].lane)
                let position = lanes[entry].index
                let first = queueIndex[lane]
                if first == .max {
                    queued[count] = Int32(lane)
                    count += 1
                    queueIndex[lane] = position
                    queueLast[lane] = position
                } else if position < first {
                    queueIndex[lane] = position
                } else if position > queueLast[lane] {
                    queueLast[lane] = position
                }
            }
        }
        queuedCount = count
    }

    /// A stop written in `round`: its arrival (`rode` false: a walk's), or its ride arrival and
    /// perhaps its arrival.
    @inline(__always)
    private func mark(_ stop: Int, round: Int, improved: Bool = true, rode: Bool) {
        let word = round * buffers.words + stop >> 6
        let bit = UInt64(1) << UInt64(stop & 63)
        if improved { buffers.improved[word] |= bit }
        if rode { buffers.rode[word] |= bit }
    }

    func accessible(_ stop: Int) -> Bool {
        !query.wheelchairOnly || network.searchStopAccessible[stop]
    }

    /// Rides along one lane of a pattern from position `first` when every run is rideable at
    /// its scheduled times (no realtime, no filter): alight where that improves a stop, board
    /// (or switch to an earlier run) where the last round reached the stop. The lane's runs
    /// are in order at every stop, so the run to board is one binary search and, on board,
    /// an earlier one lies below the current one.
    ///
    /// Past `last`, the last position the last round marked, nothing can be boarded (no
    /// other stop of the lane was reached), so the ride goes on only while it can still beat
    /// the destination's best arrival: where the pattern's arrivals never decrease along a
    /// run, the first stop reached too late ends the scan.
    private mutating func scanInOrder(lane: Int, pattern number: Int, from first: Int, through last: Int, round: Int) {
        let view = LaneView(network: network, window: window, lane: lane, pattern: number)
        let (count, runs, stops, rules, departures, times) = (view.count, view.runs, view.stops, view.rules, view.departures, view.times)
        let base = round * stopCount
        let previous = buffers.arrivals + (base - stopCount)
        let previousRides = buffers.rideArrivals + (base - stopCount)
        // Round 0's arrivals are the origin's, never a ride's.
        let changes = round > 1
        let bestRide = buffers.bestRide
        // Read once: the destination's best arrival changes between rounds, not within one.
        let target = target
        // The run on board (its place in the lane; -1: none yet) and where it was boarded.
        var run = -1
        var boardIndex = 0
        for index in first...last {
            let stop = Int(stops[index])
            let rule = rules[index]
            if run >= 0, rule & Self.alights != 0 {
                let time = times[(run &* count &+ index) &* 2]
                if time < target, time < bestRide[stop] {
                    alight(at: stop, time, round: round, ride(number, lane: lane, run, boardIndex: boardIndex, alightIndex: index))
                }
            }
            let reached = previous[stop]
            guard reached != Self.unreached, rule & Self.boards != 0 else { continue }
            // The latest run that could be boarded here: on board, the one before the current
            // run (the lane is in order; its times are read along the ride like the current
            // run's), else the lane's last.
            let latest = run >= 0 ? run - 1 : runs - 1
            guard latest >= 0 else { continue }
            let latestDeparture = run >= 0 ? times[(latest &* count &+ index) &* 2 &+ 1] : departures[index &* runs &+ latest]
            guard latestDeparture >= reached else { continue }
            // A change of vehicle needs its minimum time; boarding at the origin or after a walk
            // does not. The stop's arrival is a ride's when it is its ride arrival too (a walk
            // that improved it arrived earlier).
            let ready = changes && previousRides[stop] == reached ? reached &+ change : reached
            // Nothing boarded here can reach the destination before the best way found so far.
            guard ready < target, latestDeparture >= ready else { continue }
            let column = departures + index &* runs
            let found = Self.firstAtOrAfter(ready, column, last: latest)
            // One leaving at the same time as the current run is no better.
            if run < 0 || column[found] < times[(run &* count &+ index) &* 2 &+ 1] {
                run = found
                boardIndex = index
            }
        }
        guard run >= 0 else { return }
        let ordered = network.arrivalsInOrder[number]
        let runTimes = times + run &* count &* 2
        for index in (last + 1)..<count {
            let time = runTimes[index &* 2]
            guard time < target else {
                if ordered { return }
                continue
            }
            let stop = Int(stops[index])
            if rules[index] & Self.alights != 0, time < bestRide[stop] {
                alight(at: stop, time, round: round, ride(number, lane: lane, run, boardIndex: boardIndex, alightIndex: index))
            }
        }
    }

    /// The label of a ride on run `run` of lane `lane` (of pattern `number`).
    private func ride(_ number: Int, lane: Int, _ run: Int, boardIndex: Int, alightIndex: Int) -> Label {
        let index = Int(window.laneRuns[lane]) + run
        return .ride(
            pattern: Int32(number), row: window.runRows[index], day: window.firstDay + Int32(window.runDays[index]), boardIndex: Int32(boardIndex),
            alightIndex: Int32(alightIndex))
    }

    /// `scanInOrder` with realtime predictions, the wheelchair filter or cancelled trips: each
    /// candidate run is looked at (`earliestRun`, `earlierRun`), and with realtime every time
    /// read is moved by the run's prediction.
    private mutating func scan(lane: Int, pattern number: Int, from first: Int, round: Int) {
        let view = LaneView(network: network, window: window, lane: lane, pattern: number)
        let (count, runs, stops, rules, departures) = (view.count, view.runs, view.stops, view.rules, view.departures)
        let base = round * stopCount
        let previous = buffers.arrivals + (base - stopCount)
        let previousLabels = buffers.labels + (base - stopCount)
        var run = -1
        var boardIndex = 0
        var predicted: TripPrediction?
        for index in first..<count {
            let stop = Int(stops[index])
            let rule = rules[index]
            if run >= 0, rule & Self.alights != 0, accessible(stop), let time = arrival(lane: lane, run, index, predicted), time < buffers.bestRide[stop],
                time < target
            {
                alight(at: stop, time, round: round, ride(number, lane: lane, run, boardIndex: boardIndex, alightIndex: index))
            }
            let reached = previous[stop]
            guard reached != Self.unreached, rule & Self.boards != 0, accessible(stop) else { continue }
            let ready = previousLabels[stop].isRide ? reached &+ change : reached
            if ready >= target { continue }
            let column = departures + index &* runs
            let current = run >= 0 ? departure(lane: lane, run, index, predicted) : nil
            if let current, current < ready { continue }
            let candidate =
                run >= 0 && !usesRealtime
                ? earlierRun(lane: lane, column: column, notBefore: ready, than: run) : earliestRun(lane: lane, index: index, column: column, notBefore: ready)
            if let candidate {
                if let current, current <= candidate.time { continue }
                run = candidate.run
                predicted = usesRealtime ? prediction(lane: lane, run) : nil
                boardIndex = index
            }
        }
    }

    /// The first of `column[0...last]` at or after `time`, given `column[last]` is.
    @inline(__always)
    static func firstAtOrAfter(_ time: Int32, _ column: UnsafePointer<Int32>, last: Int) -> Int {
        var low = 0
        var high = last
        while low < high {
            let middle = (low &+ high) >> 1
            if column[middle] < time { low = middle &+ 1 } else { high = middle }
        }
        return low
    }

    /// Getting off at `stop` at `time`, which no ride reached earlier: kept as the stop's ride
    /// arrival (walks start from it), and as its arrival when nothing got there earlier.
    private mutating func alight(at stop: Int, _ time: Int32, round: Int, _ label: Label) {
        let base = round * stopCount
        buffers.bestRide[stop] = time
        buffers.rideArrivals[base + stop] = time
        buffers.rideLabels[base + stop] = label
        let improves = time < buffers.best[stop]
        if improves {
            buffers.arrivals[base + stop] = time
            buffers.best[stop] = time
            buffers.labels[base + stop] = label
        }
        mark(stop, round: round, improved: improves, rode: true)
    }

    /// Rides one run on its own: boards at the first stop the last round reached in time
    /// where it stops, alights wherever that improves a stop.
    private mutating func scan(detached row: Int32, day: Int, _ prediction: TripPrediction, pattern number: Int32, round: Int) {
        let pattern = network.patterns[Int(number)]
        if let routes = query.routes, !routes.contains(pattern.route) { return }
        let trip = pattern.trips[Int(row)]
        let serviceDay = window.firstDay + Int32(day)
        if query.wheelchairOnly && !network.tripAccessible[Int(trip)] { return }
        if !query.cancelled.isEmpty && query.cancelled.contains(TripDay(trip: trip, day: serviceDay)) { return }
        let previousBase = (round - 1) * stopCount
        let offset = window.dayOffsets[day]
        let start = timetable.feed.stopTimes.tripStart[Int(trip)]
        var boardIndex: Int?
        for index in 0..<pattern.stops.count {
            let stop = Int(network.searchStop[Int(pattern.stops[index])])
            guard accessible(stop) else { continue }
            let predicted = prediction.prediction(at: start + Int32(index))
            if let boardIndex, pattern.canAlight[index], !predicted.cancelled {
                let time = Self.axis(Int64(offset) + Int64(pattern.arrival(trip: Int(row), at: index)) + Int64(predicted.arrivalDelay ?? 0))
                if time < buffers.bestRide[stop], time < target {
                    alight(
                        at: stop, time, round: round,
                        .ride(pattern: number, row: row, day: serviceDay, boardIndex: Int32(boardIndex), alightIndex: Int32(index)))
                }
            }
            let reached = buffers.arrivals[previousBase + stop]
            guard boardIndex == nil, reached != Self.unreached, pattern.canBoard[index], !predicted.cancelled else { continue }
            let leaving = Int64(offset) + Int64(pattern.departure(trip: Int(row), at: index)) + Int64(predicted.departureDelay ?? 0)
            if leaving >= Int64(reached) + Int64(buffers.labels[previousBase + stop].isRide ? change : 0) { boardIndex = index }
        }
    }

    /// Walks from every stop a ride reached this round (or the origin, in round 0); each
    /// stop's footpaths are sorted by length, so the walk stops at the first that arrives
    /// after the destination's best arrival.
    private mutating func relaxFootpaths(round: Int) {
        let base = round * stopCount
        let walks = network.footpathWalks.base
        let walkStart = network.footpathStart.base
        let checksAccess = query.wheelchairOnly
        forEachStop(in: buffers.rode + round * buffers.words) { stop in
            let arrival = buffers.rideArrivals[base + stop]
            guard arrival < target else { return }
            for entry in Int(walkStart[stop])..<Int(walkStart[stop &+ 1]) {
                // Footpaths are at most a day long (`TransitNetwork`), so this cannot wrap.
                let walk = walks[entry]
                let time = arrival &+ walk.seconds
                if time >= target { break }
                let next = Int(walk.to)
                if time < buffers.best[next] && (!checksAccess || accessible(next)) {
                    buffers.arrivals[base + next] = time
                    buffers.best[next] = time
                    buffers.labels[base + next] = .walk(from: Int32(stop), seconds: walk.seconds)
                    mark(next, round: round, rode: false)
                }
            }
        }
    }

    private func destinationArrival(round: Int) -> (stop: Int32, walk: Int32, time: Int32)? {
        var found: (stop: Int32, walk: Int32, time: Int32)?
        for (stop, walk) in egress {
            let arrival = buffers.arrivals[round * stopCount + Int(stop)]
            guard arrival != Self.unreached else { continue }
            let time = Self.axis(Int64(arrival) + Int64(walk))
            if found == nil || time < found!.time { found = (stop, walk, time) }
        }
        return found
    }
}
