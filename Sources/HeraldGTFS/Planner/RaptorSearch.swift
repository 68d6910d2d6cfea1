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
        /// The day's place in `days` (-1 for a detached run of another day).
        var dayIndex = -1
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
    /// The services running on each of `days` (the calendar's words, copied once per query).
    let activeServices: [UInt64]
    let wordsPerDay: Int
    let usesRealtime: Bool
    /// How late and how early (seconds) a predicted departure can be against the schedule,
    /// so the search for a run looks that far around the scheduled times.
    let late: Int64
    let early: Int64
    let change: Int64
    var best: [Int64]
    /// The earliest arrival at each stop by a ride, any round: footpaths start from rides, so
    /// a ride that is not the stop's earliest arrival (a walk got there first) may still be
    /// the start of the best walk on.
    var bestRide: [Int64]
    var arrivals: [Int64]
    var labels: [Label]
    var rideArrivals: [Int64]
    var rideLabels: [Label]
    var marked: [Bool]
    var markedStops: [Int32] = []
    /// Per pattern: the first position to scan this round (Int32.max: not queued).
    var queueIndex: [Int32]
    var queued: [Int32] = []
    var egress: [(stop: Int32, walk: Int32)] = []
    /// Runs the realtime data makes skip stops: ridden on their own each round (a pattern's
    /// earliest run must serve every stop its pattern serves), and left out of their patterns.
    var detached: [(pattern: Int32, run: Run, prediction: TripPrediction)] = []
    var bestAtDestination = unreached

    init(network: TransitNetwork, timetable: Timetable, query: JourneyQuery) {
        self.network = network
        self.timetable = timetable
        self.query = query
        stopCount = network.stopCount
        rounds = max(1, query.maxTransfers + 1)
        let today = timetable.zone.localDay(query.departAt)
        days = ((today - 1)...(today + 1)).map { ($0, timetable.zone.serviceDayStart($0)) }
        let words = days.map { timetable.calendar.words(day: $0.day) }
        wordsPerDay = words.first?.count ?? 1
        activeServices = words.flatMap { $0 }
        usesRealtime = !query.realtime.predictions.isEmpty
        late = usesRealtime ? Int64(query.realtime.lookbackSeconds) : 0
        early = usesRealtime ? Int64(query.realtime.earlySeconds) : 0
        change = Int64(network.walking.minimumChangeSeconds)
        let cells = (rounds + 1) * stopCount
        best = [Int64](repeating: Self.unreached, count: stopCount)
        bestRide = [Int64](repeating: Self.unreached, count: stopCount)
        arrivals = [Int64](repeating: Self.unreached, count: cells)
        labels = [Label](repeating: .none, count: cells)
        rideArrivals = [Int64](repeating: Self.unreached, count: cells)
        rideLabels = [Label](repeating: .none, count: cells)
        marked = [Bool](repeating: false, count: stopCount)
        queueIndex = [Int32](repeating: .max, count: network.patterns.count)
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
            if time < arrivals[stop] {
                arrivals[stop] = time
                best[stop] = time
                labels[stop] = .origin(walk: origin.walkSeconds)
                rideArrivals[stop] = time
                rideLabels[stop] = .origin(walk: origin.walkSeconds)
                mark(origin.stop)
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
                marked[Int(stop)] = false
                for (pattern, index) in network.patternsAtStop[Int(stop)] where index < queueIndex[Int(pattern)] {
                    if queueIndex[Int(pattern)] == .max { queued.append(pattern) }
                    queueIndex[Int(pattern)] = index
                }
            }
            markedStops.removeAll(keepingCapacity: true)
            for pattern in queued {
                let first = queueIndex[Int(pattern)]
                queueIndex[Int(pattern)] = .max
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

    private mutating func mark(_ stop: Int32) {
        guard !marked[Int(stop)] else { return }
        marked[Int(stop)] = true
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
                alight(at: stop, reachedAt, base: base, .ride(pattern: number, row: Int32(run.row), day: run.day, boardIndex: Int32(boardIndex), alightIndex: Int32(index)))
            }
            let reached = arrivals[previousBase + stop]
            guard reached != Self.unreached, pattern.canBoard[index], accessible(Int32(stop)) else { continue }
            // A change of vehicle needs its minimum time; boarding at the origin or after a walk does not.
            let ready = reached + (labels[previousBase + stop].isRide ? change : 0)
            let current = boarded.flatMap { departure($0, pattern, index, boardedPrediction) }
            if let current, current < ready { continue }
            // On board, only a run leaving before the current one can do better: without
            // realtime (runs in FIFO order) those are the rows below it that day, and the
            // runs of the days before.
            let candidate: (run: Run, time: Int64)?
            if let run = boarded, !usesRealtime, run.dayIndex >= 0 {
                candidate = earlierRun(pattern, index: index, notBefore: ready, than: run)
            } else {
                candidate = earliestRun(pattern, index: index, notBefore: ready)
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
        guard time < bestRide[stop], time < bestAtDestination else { return }
        bestRide[stop] = time
        rideArrivals[base + stop] = time
        rideLabels[base + stop] = label
        if time < best[stop] {
            arrivals[base + stop] = time
            best[stop] = time
            labels[base + stop] = label
        }
        mark(Int32(stop))
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
                alight(at: stop, reachedAt, base: base, .ride(pattern: number, row: Int32(run.row), day: run.day, boardIndex: Int32(boardIndex), alightIndex: Int32(index)))
            }
            let reached = arrivals[previousBase + stop]
            guard boardIndex == nil, reached != Self.unreached, pattern.canBoard[index], let leaving = departure(run, pattern, index, prediction) else { continue }
            if leaving >= reached + (labels[previousBase + stop].isRide ? change : 0) { boardIndex = index }
        }
    }

    /// Walks from every stop a ride reached this round (or the origin, in round 0).
    private mutating func relaxFootpaths(round: Int) {
        let base = round * stopCount
        for index in markedStops.indices {
            let stop = markedStops[index]
            let arrival = rideArrivals[base + Int(stop)]
            guard arrival != Self.unreached else { continue }
            for path in network.footpaths[Int(stop)] where accessible(path.to) {
                let time = arrival + Int64(path.seconds)
                let to = Int(path.to)
                if time < best[to] && time < bestAtDestination {
                    arrivals[base + to] = time
                    best[to] = time
                    labels[base + to] = .walk(from: stop, seconds: path.seconds)
                    mark(path.to)
                }
            }
        }
    }

    private func destinationArrival(round: Int) -> (stop: Int32, walk: Int32, time: Int64)? {
        var found: (stop: Int32, walk: Int32, time: Int64)?
        for (stop, walk) in egress {
            let arrival = arrivals[round * stopCount + Int(stop)]
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
    private func earliestRun(_ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, days searched: Range<Int>? = nil) -> (run: Run, time: Int64)? {
        var found: (run: Run, time: Int64)?
        let count = pattern.trips.count
        for dayIndex in searched ?? days.indices {
            let (day, dayStart) = days[dayIndex]
            let wanted = notBefore - late - dayStart
            guard wanted <= Int64(pattern.departure(trip: count - 1, at: index)) else { continue }
            // A later day whose first run leaves after the one found cannot do better.
            if let found, dayStart + Int64(pattern.departure(trip: 0, at: index)) - early >= found.time { continue }
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                if Int64(pattern.departure(trip: mid, at: index)) < wanted { low = mid + 1 } else { high = mid }
            }
            for row in low..<count {
                let scheduled = dayStart + Int64(pattern.departure(trip: row, at: index))
                if let found, scheduled - early >= found.time { break }
                let trip = pattern.trips[row]
                let service = Int(network.tripService[Int(trip)])
                guard activeServices[dayIndex * wordsPerDay + service >> 6] & (1 << UInt64(service & 63)) != 0 else { continue }
                if query.wheelchairOnly && !network.tripAccessible[Int(trip)] { continue }
                if !query.cancelled.isEmpty && query.cancelled.contains(TripDay(trip: trip, day: day)) { continue }
                let run = Run(row: row, day: day, dayStart: dayStart, dayIndex: dayIndex)
                let predicted = usesRealtime ? prediction(pattern, row: row, day: day) : nil
                // A run that skips stops is ridden on its own (`detached`).
                if predicted?.skipsStops == true { continue }
                guard let time = departure(run, pattern, index, predicted), time >= notBefore else { continue }
                if found == nil || time < found!.time { found = (run, time) }
                if !usesRealtime { break }
            }
        }
        return found
    }

    /// Without realtime: the earliest run leaving position `index` at or after `notBefore`
    /// and before `current` (whose departure there is at or after `notBefore`); nil when
    /// none does (`current` stays the best).
    private func earlierRun(_ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, than current: Run) -> (run: Run, time: Int64)? {
        var found: (run: Run, time: Int64)?
        var row = current.row - 1
        while row >= 0 {
            let time = current.dayStart + Int64(pattern.departure(trip: row, at: index))
            if time < notBefore { break }
            let trip = pattern.trips[row]
            let service = Int(network.tripService[Int(trip)])
            if activeServices[current.dayIndex * wordsPerDay + service >> 6] & (1 << UInt64(service & 63)) != 0
                && (!query.wheelchairOnly || network.tripAccessible[Int(trip)])
                && (query.cancelled.isEmpty || !query.cancelled.contains(TripDay(trip: trip, day: current.day)))
            {
                found = (Run(row: row, day: current.day, dayStart: current.dayStart, dayIndex: current.dayIndex), time)
            }
            row -= 1
        }
        if current.dayIndex > 0, let before = earliestRun(pattern, index: index, notBefore: notBefore, days: 0..<current.dayIndex),
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
        let end = arrivals[round * stopCount + Int(stop)]
        if egress > 0 { legs.append(.walk(from: stop, to: nil, departure: end, arrival: end + Int64(egress))) }
        // After a walk the stop it started from was reached by a ride (or is the origin).
        var afterWalk = false
        while true {
            let cell = round * stopCount + Int(stop)
            switch afterWalk ? rideLabels[cell] : labels[cell] {
            case .none:
                return nil
            case .origin(let walk):
                if walk > 0 { legs.append(.walk(from: nil, to: stop, departure: query.departAt, arrival: query.departAt + Int64(walk))) }
                return Journey(legs: legs.reversed())
            case .walk(let from, let seconds):
                let leaving = rideArrivals[round * stopCount + Int(from)]
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
                guard let leaving = departure(run, pattern, Int(boardIndex), predicted), let reaching = arrival(run, pattern, Int(alightIndex), predicted) else { return nil }
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
