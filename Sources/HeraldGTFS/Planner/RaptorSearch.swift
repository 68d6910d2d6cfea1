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

    // MARK: Runs and their times

    private func prediction(_ pattern: TransitNetwork.Pattern, row: Int, day: Int32) -> TripPrediction? {
        guard usesRealtime else { return nil }
        return query.realtime.predictions[TripInstance(trip: pattern.trips[row], day: day, shift: pattern.shifts[row])]
    }

    private func position(_ pattern: TransitNetwork.Pattern, _ run: Run, _ index: Int) -> Int32 {
        timetable.feed.stopTimes.tripStart[Int(pattern.trips[run.row])] + Int32(index)
    }

    /// When the run leaves position `index`; nil when it does not stop there (skipped, cancelled).
    func departure(_ run: Run, _ pattern: TransitNetwork.Pattern, _ index: Int, _ prediction: TripPrediction?) -> Int64? {
        let scheduled = run.dayStart + Int64(pattern.departure(trip: run.row, at: index))
        guard let prediction else { return scheduled }
        let stop = prediction.prediction(at: position(pattern, run, index))
        return stop.cancelled ? nil : scheduled + Int64(stop.departureDelay ?? 0)
    }

    /// When the run reaches position `index`; nil when it does not stop there.
    func arrival(_ run: Run, _ pattern: TransitNetwork.Pattern, _ index: Int, _ prediction: TripPrediction?) -> Int64? {
        let scheduled = run.dayStart + Int64(pattern.arrival(trip: run.row, at: index))
        guard let prediction else { return scheduled }
        let stop = prediction.prediction(at: position(pattern, run, index))
        return stop.cancelled ? nil : scheduled + Int64(stop.arrivalDelay ?? 0)
    }

    /// The run of `pattern` leaving position `index` first at or after `notBefore`, over the
    /// searched service days. Without realtime the runs are in departure order (FIFO), so the
    /// first one running that day is the day's answer; with it, runs within the largest
    /// delay and earliness around the scheduled time are compared by predicted departure.
    private func earliestRun(_ number: Int32, _ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, days searched: Range<Int>? = nil) -> (
        run: Run, time: Int64
    )? {
        var found: (run: Run, time: Int64)?
        let filtered = query.wheelchairOnly || !query.cancelled.isEmpty
        for dayIndex in searched ?? days.indices {
            let (day, dayStart) = days[dayIndex]
            let runs = dayRuns[dayIndex]
            let first = Int(runs.rowStart[Int(number)])
            let count = Int(runs.rowStart[Int(number) + 1]) - first
            guard count > 0 else { continue }
            let column = runs.departureStart[Int(number)] + index * count
            let wanted = notBefore - late - dayStart
            guard wanted <= Int64(runs.departures[column + count - 1]) else { continue }
            // A later day whose first run leaves after the one found cannot do better.
            if let found, dayStart + Int64(runs.departures[column]) - early >= found.time { continue }
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                if Int64(runs.departures[column + mid]) < wanted { low = mid + 1 } else { high = mid }
            }
            for dayRow in low..<count {
                let scheduled = dayStart + Int64(runs.departures[column + dayRow])
                if let found, scheduled - early >= found.time { break }
                let row = Int(runs.rows[first + dayRow])
                if filtered && !rideable(pattern.trips[row], day: day) { continue }
                let run = Run(row: row, day: day, dayStart: dayStart, dayIndex: dayIndex, dayRow: dayRow)
                guard usesRealtime else {
                    if scheduled >= notBefore, found == nil || scheduled < found!.time { found = (run, scheduled) }
                    break
                }
                let predicted = prediction(pattern, row: row, day: day)
                // A run that skips stops is ridden on its own (`detached`).
                if predicted?.skipsStops == true { continue }
                guard let time = departure(run, pattern, index, predicted), time >= notBefore else { continue }
                if found == nil || time < found!.time { found = (run, time) }
            }
        }
        return found
    }

    /// Whether the query lets `trip` be ridden on `day` (wheelchair, trips it cancels).
    private func rideable(_ trip: Int32, day: Int32) -> Bool {
        (!query.wheelchairOnly || network.tripAccessible[Int(trip)])
            && (query.cancelled.isEmpty || !query.cancelled.contains(TripDay(trip: trip, day: day)))
    }

    /// Without realtime: the earliest run leaving position `index` at or after `notBefore`
    /// and before `current` (whose departure there is at or after `notBefore`); nil when
    /// none does (`current` stays the best).
    private func earlierRun(_ number: Int32, _ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, than current: Run) -> (run: Run, time: Int64)? {
        var found: (run: Run, time: Int64)?
        let runs = dayRuns[current.dayIndex]
        let first = Int(runs.rowStart[Int(number)])
        let count = Int(runs.rowStart[Int(number) + 1]) - first
        let column = runs.departureStart[Int(number)] + index * count
        let wanted = notBefore - current.dayStart
        if query.wheelchairOnly || !query.cancelled.isEmpty {
            var dayRow = current.dayRow - 1
            while dayRow >= 0, Int64(runs.departures[column + dayRow]) >= wanted {
                let row = Int(runs.rows[first + dayRow])
                if rideable(pattern.trips[row], day: current.day) {
                    found = (
                        Run(row: row, day: current.day, dayStart: current.dayStart, dayIndex: current.dayIndex, dayRow: dayRow),
                        current.dayStart + Int64(runs.departures[column + dayRow])
                    )
                }
                dayRow -= 1
            }
        } else if current.dayRow > 0, Int64(runs.departures[column + current.dayRow - 1]) >= wanted {
            var low = 0
            var high = current.dayRow - 1
            while low < high {
                let mid = (low + high) / 2
                if Int64(runs.departures[column + mid]) < wanted { low = mid + 1 } else { high = mid }
            }
            found = (
                Run(row: Int(runs.rows[first + low]), day: current.day, dayStart: current.dayStart, dayIndex: current.dayIndex, dayRow: low),
                current.dayStart + Int64(runs.departures[column + low])
            )
        }
        if current.dayIndex > 0, let before = earliestRun(number, pattern, index: index, notBefore: notBefore, days: 0..<current.dayIndex),
            before.time < (found?.time ?? .max)
        {
            found = before
        }
        return found
    }

    // MARK: Journeys

    private func reconstruct(round: Int, stop: Int32, egress: Int32) -> Journey? {
        var legs: [Journey.Leg] = []
        var round = round
        var stop = stop
        let end = buffers.arrivals[round * stopCount + Int(stop)]
        if egress > 0 { legs.append(.walk(from: stop, to: nil, departure: end, arrival: end + Int64(egress))) }
        // After a walk the stop it started from was reached by a ride (or is the origin).
        var afterWalk = false
        while true {
            let cell = round * stopCount + Int(stop)
            switch afterWalk ? buffers.rideLabels[cell] : buffers.labels[cell] {
            case .none:
                return nil
            case .origin(let walk):
                if walk > 0 { legs.append(.walk(from: nil, to: stop, departure: query.departAt, arrival: query.departAt + Int64(walk))) }
                return Journey(legs: legs.reversed())
            case .walk(let from, let seconds):
                let leaving = buffers.rideArrivals[round * stopCount + Int(from)]
                legs.append(.walk(from: from, to: stop, departure: leaving, arrival: leaving + Int64(seconds)))
                stop = from
                afterWalk = true
                continue
            case .ride(let number, let row, let day, let boardIndex, let alightIndex):
                let pattern = network.patterns[Int(number)]
                let trip = pattern.trips[Int(row)]
                let run = Run(row: Int(row), day: day, dayStart: timetable.zone.serviceDayStart(day))
                let predicted = prediction(pattern, row: Int(row), day: day)
                let start = Int(timetable.feed.stopTimes.tripStart[Int(trip)])
                guard let leaving = departure(run, pattern, Int(boardIndex), predicted), let reaching = arrival(run, pattern, Int(alightIndex), predicted)
                else { return nil }
                legs.append(
                    .ride(
                        Journey.Ride(
                            trip: trip, day: day, shift: pattern.shifts[Int(row)], board: start + Int(boardIndex), alight: start + Int(alightIndex),
                            departure: leaving, arrival: reaching)))
                stop = pattern.stops[Int(boardIndex)]
                round -= 1
            }
            afterWalk = false
        }
    }
}
