/// Round-based public transit routing (RAPTOR, Delling, Pajor and Werneck 2012) over a
/// `TransitNetwork`: round k finds the earliest arrival at every stop with at most k rides;
/// the answer is the Pareto set over arrival time and number of transfers (each round that
/// reaches the destination earlier than every round before it adds one journey).
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

    /// How a stop was reached in a round.
    enum Label {
        case none
        case origin(walk: Int32)
        case ride(pattern: Int32, row: Int32, day: Int32, boardIndex: Int32, alightIndex: Int32)
        case walk(from: Int32, seconds: Int32)
    }

    static let unreached = Int64.max

    /// The Pareto-optimal journeys (fewest transfers first), empty when none exists within
    /// `maxTransfers` and the service days around `departAt`.
    public func plan(_ query: JourneyQuery) -> [Journey] {
        let stopCount = network.stopCount
        let rounds = query.maxTransfers + 1
        var best = [Int64](repeating: Self.unreached, count: stopCount)
        var arrivals = [[Int64]](repeating: [Int64](repeating: Self.unreached, count: stopCount), count: rounds + 1)
        var labels = [[Label]](repeating: [Label](repeating: .none, count: stopCount), count: rounds + 1)
        // How each stop was reached by a ride (or from the origin) in each round: footpaths
        // start from these, so a walk never follows a walk, even when a walk improved the
        // stop's arrival later in the round.
        var rideArrivals = [[Int64]](repeating: [Int64](repeating: Self.unreached, count: stopCount), count: rounds + 1)
        var rideLabels = [[Label]](repeating: [Label](repeating: .none, count: stopCount), count: rounds + 1)
        var marked = Set<Int32>()
        var egress: [Int32: Int32] = [:]
        for destination in query.destinations { egress[destination.stop] = min(egress[destination.stop] ?? .max, destination.walkSeconds) }
        for origin in query.origins where accessible(stop: origin.stop, query) {
            let time = query.departAt + Int64(origin.walkSeconds)
            if time < arrivals[0][Int(origin.stop)] {
                arrivals[0][Int(origin.stop)] = time
                best[Int(origin.stop)] = time
                labels[0][Int(origin.stop)] = .origin(walk: origin.walkSeconds)
                rideArrivals[0][Int(origin.stop)] = time
                rideLabels[0][Int(origin.stop)] = .origin(walk: origin.walkSeconds)
                marked.insert(origin.stop)
            }
        }
        // Footpaths from the origin stops (a query by stop id may start next door).
        for stop in marked.sorted() {
            for path in network.footpaths[Int(stop)] where accessible(stop: path.to, query) {
                let time = rideArrivals[0][Int(stop)] + Int64(path.seconds)
                if time < best[Int(path.to)] {
                    arrivals[0][Int(path.to)] = time
                    best[Int(path.to)] = time
                    labels[0][Int(path.to)] = .walk(from: stop, seconds: path.seconds)
                    marked.insert(path.to)
                }
            }
        }
        var journeys: [Journey] = []
        var bestAtDestination = Self.unreached
        // A journey with no ride (the origin is a destination stop).
        if let walkOnly = destinationArrival(arrivals[0], egress), walkOnly.time < bestAtDestination {
            bestAtDestination = walkOnly.time
        }

        for round in 1...rounds {
            // Patterns to scan, from the earliest marked stop on each.
            var queue: [Int32: Int32] = [:]
            for stop in marked {
                for (pattern, index) in network.patternsAtStop[Int(stop)] {
                    if let current = queue[pattern], current <= index { continue }
                    queue[pattern] = index
                }
            }
            marked.removeAll(keepingCapacity: true)
            let previous = arrivals[round - 1]
            for (patternNumber, first) in queue.sorted(by: { $0.key < $1.key }) {
                let pattern = network.patterns[Int(patternNumber)]
                var boarded: (row: Int, day: Int32, dayStart: Int64, boardIndex: Int)?
                for index in Int(first)..<pattern.stops.count {
                    let stop = pattern.stops[index]
                    // Alight here if that improves on everything known (and on the destination).
                    if let trip = boarded, pattern.canAlight[index], accessible(stop: stop, query) {
                        let arrival = trip.dayStart + Int64(pattern.arrival(trip: trip.row, at: index))
                        if arrival < best[Int(stop)] && arrival < bestAtDestination {
                            arrivals[round][Int(stop)] = arrival
                            best[Int(stop)] = arrival
                            let label = Label.ride(
                                pattern: patternNumber, row: Int32(trip.row), day: trip.day, boardIndex: Int32(trip.boardIndex), alightIndex: Int32(index))
                            labels[round][Int(stop)] = label
                            rideArrivals[round][Int(stop)] = arrival
                            rideLabels[round][Int(stop)] = label
                            marked.insert(stop)
                        }
                    }
                    // Board (or switch to) an earlier trip if this stop was reached in the last round.
                    let reached = previous[Int(stop)]
                    guard reached != Self.unreached, pattern.canBoard[index], accessible(stop: stop, query) else { continue }
                    // A change of vehicle needs its minimum time; boarding at the origin does not.
                    let ready = reached + (round > 1 && isRide(labels[round - 1][Int(stop)]) ? Int64(network.walking.minimumChangeSeconds) : 0)
                    if let current = boarded, current.dayStart + Int64(pattern.departure(trip: current.row, at: index)) < ready { continue }
                    if let catchable = earliestTrip(pattern, index: index, notBefore: ready, query) {
                        let departure = catchable.dayStart + Int64(pattern.departure(trip: catchable.row, at: index))
                        if let current = boarded, current.dayStart + Int64(pattern.departure(trip: current.row, at: index)) <= departure { continue }
                        boarded = (catchable.row, catchable.day, catchable.dayStart, index)
                    }
                }
            }
            // Footpaths from the stops reached by a ride in this round.
            for stop in marked.sorted() {
                let arrival = rideArrivals[round][Int(stop)]
                for path in network.footpaths[Int(stop)] where accessible(stop: path.to, query) {
                    let time = arrival + Int64(path.seconds)
                    if time < best[Int(path.to)] && time < bestAtDestination {
                        arrivals[round][Int(path.to)] = time
                        best[Int(path.to)] = time
                        labels[round][Int(path.to)] = .walk(from: stop, seconds: path.seconds)
                        marked.insert(path.to)
                    }
                }
            }
            if let reached = destinationArrival(arrivals[round], egress), reached.time < bestAtDestination {
                bestAtDestination = reached.time
                if let journey = reconstruct(
                    round: round, stop: reached.stop, egress: reached.walk, labels: labels, arrivals: arrivals, rideLabels: rideLabels,
                    rideArrivals: rideArrivals, query: query)
                {
                    journeys.append(journey)
                }
            }
            if marked.isEmpty { break }
        }
        return journeys
    }

    private func isRide(_ label: Label) -> Bool {
        if case .ride = label { return true }
        return false
    }

    private func destinationArrival(_ arrivals: [Int64], _ egress: [Int32: Int32]) -> (stop: Int32, walk: Int32, time: Int64)? {
        var found: (stop: Int32, walk: Int32, time: Int64)?
        for (stop, walk) in egress where arrivals[Int(stop)] != Self.unreached {
            let time = arrivals[Int(stop)] + Int64(walk)
            if found == nil || time < found!.time { found = (stop, walk, time) }
        }
        return found
    }

    private func accessible(stop: Int32, _ query: JourneyQuery) -> Bool {
        !query.wheelchairOnly || timetable.feed.stops[Int(stop)].wheelchairBoarding != 2
    }

    /// The earliest trip of `pattern` leaving position `index` at or after `notBefore`, over
    /// the service days that can hold it (the day before, for trips past midnight; the day;
    /// the day after).
    private func earliestTrip(_ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, _ query: JourneyQuery) -> (row: Int, day: Int32, dayStart: Int64)? {
        let zone = timetable.zone
        let today = zone.localDay(notBefore)
        var found: (row: Int, day: Int32, dayStart: Int64, time: Int64)?
        for day in (today - 1)...(today + 1) {
            let dayStart = zone.serviceDayStart(day)
            let wanted = notBefore - dayStart
            guard wanted <= Int64(Int32.max) else { continue }
            // Binary search: the trips are FIFO, so departures at `index` are sorted.
            var low = 0
            var high = pattern.trips.count
            while low < high {
                let mid = (low + high) / 2
                if Int64(pattern.departure(trip: mid, at: index)) < wanted { low = mid + 1 } else { high = mid }
            }
            for row in low..<pattern.trips.count {
                let time = dayStart + Int64(pattern.departure(trip: row, at: index))
                if let found, found.time <= time { break }
                let trip = pattern.trips[row]
                let record = timetable.feed.trips[Int(trip)]
                guard timetable.calendar.isActive(service: record.service, day: day) else { continue }
                if query.wheelchairOnly && record.wheelchairAccessible != 1 { continue }
                if query.cancelled.contains(TripDay(trip: trip, day: day)) { continue }
                found = (row, day, dayStart, time)
                break
            }
        }
        return found.map { ($0.row, $0.day, $0.dayStart) }
    }

    private func reconstruct(
        round: Int, stop: Int32, egress: Int32, labels: [[Label]], arrivals: [[Int64]], rideLabels: [[Label]], rideArrivals: [[Int64]],
        query: JourneyQuery
    ) -> Journey? {
        var legs: [Journey.Leg] = []
        var round = round
        var stop = stop
        let end = arrivals[round][Int(stop)]
        if egress > 0 { legs.append(.walk(from: stop, to: nil, departure: end, arrival: end + Int64(egress))) }
        // After a walk the stop it started from was reached by a ride (or is the origin).
        var afterWalk = false
        while true {
            switch afterWalk ? rideLabels[round][Int(stop)] : labels[round][Int(stop)] {
            case .none:
                return nil
            case .origin(let walk):
                if walk > 0 { legs.append(.walk(from: nil, to: stop, departure: query.departAt, arrival: query.departAt + Int64(walk))) }
                return Journey(legs: legs.reversed())
            case .walk(let from, let seconds):
                let departure = rideArrivals[round][Int(from)]
                legs.append(.walk(from: from, to: stop, departure: departure, arrival: departure + Int64(seconds)))
                stop = from
                afterWalk = true
                continue
            case .ride(let patternNumber, let row, let day, let boardIndex, let alightIndex):
                let pattern = network.patterns[Int(patternNumber)]
                let trip = pattern.trips[Int(row)]
                let dayStart = timetable.zone.serviceDayStart(day)
                let start = Int(timetable.feed.stopTimes.tripStart[Int(trip)])
                legs.append(
                    .ride(
                        trip: trip, day: day, board: start + Int(boardIndex), alight: start + Int(alightIndex),
                        departure: dayStart + Int64(pattern.departure(trip: Int(row), at: Int(boardIndex))),
                        arrival: dayStart + Int64(pattern.arrival(trip: Int(row), at: Int(alightIndex)))))
                stop = pattern.stops[Int(boardIndex)]
                round -= 1
            }
            afterWalk = false
        }
    }
}
