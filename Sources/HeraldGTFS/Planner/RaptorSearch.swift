/// One query's rounds of RAPTOR: per round, the earliest arrival at each stop and how it was
/// reached, in flat arrays (round × stop); the patterns to scan; the journey found after
/// each round.
///
/// Why footpaths start from ride arrivals (`rideArrivals`, `rideLabels`) and not from the
/// round's best arrival: a stop improved by a walk must not start another walk, and a stop
/// first reached by a ride and then improved by a walk in the same round still has its ride
/// to walk on from.
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

    /// A run of a pattern on a service day. Plain integers, so the scan copies it freely; its
    /// realtime prediction, when realtime is in use, travels beside it.
    struct Run {
        let row: Int
        let day: Int32
        let dayStart: Int64
        /// The day's place in `days` and the run's among that day's runs of its pattern
        /// (`ServiceDayRuns`); -1 for a detached run.
        var dayIndex = -1
        var dayRow = -1
    }

    static let unreached = Int64.max

    let network: TransitNetwork
    let timetable: Timetable
    let query: JourneyQuery
    let stopCount: Int
    let rounds: Int
    /// The service days a ride can belong to, with their starts: the day before the
    /// departure's (its trips past midnight), that day and the next.
    let days: [(day: Int32, start: Int64)]
    /// The runs of each of `days`.
    let dayRuns: [ServiceDayRuns]
    let usesRealtime: Bool
    /// How late and how early (seconds) a predicted departure can be against the schedule,
    /// so the search for a run looks that far around the scheduled times.
    let late: Int64
    let early: Int64
    let change: Int64
    /// Per stop and per round × stop (see `RaptorBuffers`): `best` the earliest arrival at
    /// each stop, any round; `bestRide` the earliest by a ride, any round (footpaths start
    /// from rides, so a ride that is not the stop's earliest arrival — a walk got there
    /// first — may still be the start of the best walk on).
    private(set) var buffers: RaptorBuffers
    var markedStops: [Int32] = []
    var queued: [Int32] = []
    var egress: [(stop: Int32, walk: Int32)] = []
    /// Runs the realtime data makes skip stops: ridden on their own each round (a pattern's
    /// earliest run must serve every stop its pattern serves), and left out of their patterns.
    var detached: [(pattern: Int32, run: Run, prediction: TripPrediction)] = []
    var bestAtDestination = unreached

    init(network: TransitNetwork, timetable: Timetable, query: JourneyQuery, buffers: RaptorBuffers, dayRuns: (Int32) -> ServiceDayRuns) {
        self.network = network
        self.timetable = timetable
        self.query = query
        stopCount = network.stopCount
        rounds = max(1, query.maxTransfers + 1)
        let today = timetable.zone.localDay(query.departAt)
        days = ((today - 1)...(today + 1)).map { ($0, timetable.zone.serviceDayStart($0)) }
        self.dayRuns = days.map { dayRuns($0.day) }
        usesRealtime = !query.realtime.predictions.isEmpty
        late = usesRealtime ? Int64(query.realtime.lookbackSeconds) : 0
        early = usesRealtime ? Int64(query.realtime.earlySeconds) : 0
        change = Int64(network.walking.minimumChangeSeconds)
        self.buffers = buffers
        self.buffers.prepare(stopCount: stopCount, patterns: network.patterns.count, cells: (rounds + 1) * stopCount)
        if usesRealtime {
            for instance in query.realtime.runsSkippingStops where days.contains(where: { $0.day == instance.day }) {
                guard let (pattern, row) = network.location(of: instance), let prediction = query.realtime.predictions[instance] else { continue }
                detached.append((pattern, Run(row: Int(row), day: instance.day, dayStart: timetable.zone.serviceDayStart(instance.day)), prediction))
            }
        }
        for destination in query.destinations {
            if let index = egress.firstIndex(where: { $0.stop == destination.stop }) {
                egress[index].walk = min(egress[index].walk, destination.walkSeconds)
            } else {
                egress.append((destination.stop, destination.walkSeconds))
            }
        }
    }

    mutating func run() -> [Journey] {
        var journeys: [Journey] = []
        for origin in query.origins where accessible(origin.stop) {
            let stop = Int(origin.stop)
            let time = query.departAt + Int64(origin.walkSeconds)
            if time < buffers.arrivals[stop] {
                buffers.arrivals[stop] = time
                buffers.best[stop] = time
                buffers.labels[stop] = .origin(walk: origin.walkSeconds)
                buffers.rideArrivals[stop] = time
                buffers.rideLabels[stop] = .origin(walk: origin.walkSeconds)
                mark(origin.stop, base: 0)
            }
        }
        // Footpaths from the origin stops (a query by stop id may start next door).
        relaxFootpaths(round: 0)
        // A walk alone, when the destination is a footpath (or nothing) away.
        if let reached = destinationArrival(round: 0) {
            bestAtDestination = reached.time
            if let journey = reconstruct(round: 0, stop: reached.stop, egress: reached.walk), !journey.legs.isEmpty { journeys.append(journey) }
        }
        for round in 1...rounds {
            for stop in markedStops {
                buffers.marked[Int(stop)] = false
                for entry in Int(network.stopPatternStart[Int(stop)])..<Int(network.stopPatternStart[Int(stop) + 1]) {
                    let pattern = Int(network.stopPatterns[entry])
                    let index = network.stopPatternIndexes[entry]
                    guard index < buffers.queueIndex[pattern] else { continue }
                    if buffers.queueIndex[pattern] == .max { queued.append(Int32(pattern)) }
                    buffers.queueIndex[pattern] = index
                }
            }
            markedStops.removeAll(keepingCapacity: true)
            for pattern in queued {
                let first = buffers.queueIndex[Int(pattern)]
                buffers.queueIndex[Int(pattern)] = .max
                if let routes = query.routes, !routes.contains(network.patterns[Int(pattern)].route) { continue }
                scan(pattern: pattern, from: Int(first), round: round)
            }
            queued.removeAll(keepingCapacity: true)
            for (pattern, run, prediction) in detached { scan(detached: run, prediction, pattern: pattern, round: round) }
            relaxFootpaths(round: round)
            if let reached = destinationArrival(round: round), reached.time < bestAtDestination {
                bestAtDestination = reached.time
                if let journey = reconstruct(round: round, stop: reached.stop, egress: reached.walk) { journeys.append(journey) }
            }
            if markedStops.isEmpty { break }
        }
        return journeys
    }

    /// Hands the buffers back, reset, for the next search (this one is done).
    mutating func takeBuffers() -> RaptorBuffers {
        for stop in markedStops { buffers.marked[Int(stop)] = false }
        buffers.reset()
        var taken = RaptorBuffers()
        swap(&taken, &buffers)
        return taken
    }

    /// A stop written in the round starting at cell `base`: its cell is recorded for the reset.
    private mutating func mark(_ stop: Int32, base: Int) {
        guard !buffers.marked[Int(stop)] else { return }
        buffers.marked[Int(stop)] = true
        buffers.touched.append(Int32(base + Int(stop)))
        markedStops.append(stop)
    }

    private func accessible(_ stop: Int32) -> Bool {
        !query.wheelchairOnly || network.stopAccessible[Int(stop)]
    }

    /// Rides along one pattern from `first`: alight where that improves a stop, board (or
    /// switch to an earlier run) where the last round reached the stop.
    private mutating func scan(pattern number: Int32, from first: Int, round: Int) {
        let pattern = network.patterns[Int(number)]
        let base = round * stopCount
        let previousBase = (round - 1) * stopCount
        var boarded: Run?
        var boardedPrediction: TripPrediction?
        var boardIndex = 0
        for index in first..<pattern.stops.count {
            let stop = Int(pattern.stops[index])
            if let run = boarded, pattern.canAlight[index], accessible(Int32(stop)), let reachedAt = arrival(run, pattern, index, boardedPrediction) {
                alight(
                    at: stop, reachedAt, base: base,
                    .ride(pattern: number, row: Int32(run.row), day: run.day, boardIndex: Int32(boardIndex), alightIndex: Int32(index)))
            }
            let reached = buffers.arrivals[previousBase + stop]
            guard reached != Self.unreached, pattern.canBoard[index], accessible(Int32(stop)) else { continue }
            // A change of vehicle needs its minimum time; boarding at the origin or after a walk does not.
            let ready = reached + (buffers.labels[previousBase + stop].isRide ? change : 0)
            // Nothing boarded here can reach the destination before the best way found so far.
            if ready >= bestAtDestination { continue }
            let current = boarded.flatMap { departure($0, pattern, index, boardedPrediction) }
            if let current, current < ready { continue }
            // On board, only a run leaving before the current one can do better: without
            // realtime (runs in FIFO order) those are the rows below it that day, and the
            // runs of the days before.
            let candidate: (run: Run, time: Int64)?
            if let run = boarded, !usesRealtime, run.dayIndex >= 0 {
                candidate = earlierRun(number, pattern, index: index, notBefore: ready, than: run)
            } else {
                candidate = earliestRun(number, pattern, index: index, notBefore: ready)
            }
            if let candidate {
                if let current, current <= candidate.time { continue }
                boarded = candidate.run
                boardedPrediction = usesRealtime ? prediction(pattern, row: candidate.run.row, day: candidate.run.day) : nil
                boardIndex = index
            }
        }
    }

    /// Getting off at `stop` at `time`: kept as the stop's ride arrival when no ride got there
    /// earlier (walks start from it), and as its arrival when nothing did.
    private mutating func alight(at stop: Int, _ time: Int64, base: Int, _ label: Label) {
        guard time < buffers.bestRide[stop], time < bestAtDestination else { return }
        buffers.bestRide[stop] = time
        buffers.rideArrivals[base + stop] = time
        buffers.rideLabels[base + stop] = label
        if time < buffers.best[stop] {
            buffers.arrivals[base + stop] = time
            buffers.best[stop] = time
            buffers.labels[base + stop] = label
        }
        mark(Int32(stop), base: base)
    }

    /// Rides one run on its own: boards at the first stop the last round reached in time
    /// where it stops, alights wherever that improves a stop.
    private mutating func scan(detached run: Run, _ prediction: TripPrediction, pattern number: Int32, round: Int) {
        if let routes = query.routes, !routes.contains(network.patterns[Int(number)].route) { return }
        let trip = network.patterns[Int(number)].trips[run.row]
        if query.wheelchairOnly && !network.tripAccessible[Int(trip)] { return }
        if !query.cancelled.isEmpty && query.cancelled.contains(TripDay(trip: trip, day: run.day)) { return }
        let pattern = network.patterns[Int(number)]
        let base = round * stopCount
        let previousBase = (round - 1) * stopCount
        var boardIndex: Int?
        for index in 0..<pattern.stops.count {
            let stop = Int(pattern.stops[index])
            guard accessible(Int32(stop)) else { continue }
            if let boardIndex, pattern.canAlight[index], let reachedAt = arrival(run, pattern, index, prediction) {
                alight(
                    at: stop, reachedAt, base: base,
                    .ride(pattern: number, row: Int32(run.row), day: run.day, boardIndex: Int32(boardIndex), alightIndex: Int32(index)))
            }
            let reached = buffers.arrivals[previousBase + stop]
            guard boardIndex == nil, reached != Self.unreached, pattern.canBoard[index], let leaving = departure(run, pattern, index, prediction) else {
                continue
            }
            if leaving >= reached + (buffers.labels[previousBase + stop].isRide ? change : 0) { boardIndex = index }
        }
    }

    /// Walks from every stop a ride reached this round (or the origin, in round 0).
    private mutating func relaxFootpaths(round: Int) {
        let base = round * stopCount
        for index in markedStops.indices {
            let stop = markedStops[index]
            let arrival = buffers.rideArrivals[base + Int(stop)]
            guard arrival < bestAtDestination else { continue }
            for entry in Int(network.footpathStart[Int(stop)])..<Int(network.footpathStart[Int(stop) + 1]) {
                let seconds = network.footpathSeconds[entry]
                let time = arrival + Int64(seconds)
                let to = Int(network.footpathTo[entry])
                if time < buffers.best[to] && time < bestAtDestination && accessible(Int32(to)) {
                    buffers.arrivals[base + to] = time
                    buffers.best[to] = time
                    buffers.labels[base + to] = .walk(from: stop, seconds: seconds)
                    mark(Int32(to), base: base)
                }
            }
        }
    }

    private func destinationArrival(round: Int) -> (stop: Int32, walk: Int32, time: Int64)? {
        var found: (stop: Int32, walk: Int32, time: Int64)?
        for (stop, walk) in egress {
            let arrival = buffers.arrivals[round * stopCount + Int(stop)]
            guard arrival != Self.unreached else { continue }
            let time = arrival + Int64(walk)
            if found == nil || time < found!.time { found = (stop, walk, time) }
        }
        return found
    }
}
