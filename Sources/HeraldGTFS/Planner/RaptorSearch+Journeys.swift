extension RaptorSearch {
    /// The journey reaching `stop` (a search stop) in `round`, then walking `egress` seconds,
    /// read back from the labels, with the feed's stops; nil when a label is missing or a
    /// ride's times are gone.
    func reconstruct(round: Int, stop: Int32, egress: Int32) -> Journey? {
        var legs: [Journey.Leg] = []
        var round = round
        var stop = stop
        let end = instant(buffers.arrivals[round * stopCount + Int(stop)])
        if egress > 0 { legs.append(.walk(from: network.feedStop[Int(stop)], to: nil, departure: end, arrival: end + Int64(egress))) }
        // After a walk the stop it started from was reached by a ride (or is the origin).
        var afterWalk = false
        while true {
            let cell = round * stopCount + Int(stop)
            switch afterWalk ? buffers.rideLabels[cell] : buffers.labels[cell] {
            case .none:
                return nil
            case .origin(let walk):
                if walk > 0 { legs.append(.walk(from: nil, to: network.feedStop[Int(stop)], departure: query.departAt, arrival: query.departAt + Int64(walk))) }
                return Journey(legs: legs.reversed())
            case .walk(let from, let seconds):
                let leaving = instant(buffers.rideArrivals[round * stopCount + Int(from)])
                legs.append(.walk(from: network.feedStop[Int(from)], to: network.feedStop[Int(stop)], departure: leaving, arrival: leaving + Int64(seconds)))
                stop = from
                afterWalk = true
                continue
            case .ride(let number, let row, let day, let boardIndex, let alightIndex):
                let pattern = network.patterns[Int(number)]
                let trip = pattern.trips[Int(row)]
                let dayStart = timetable.zone.serviceDayStart(day)
                let start = Int(timetable.feed.stopTimes.tripStart[Int(trip)])
                var leaving = dayStart + Int64(pattern.departure(trip: Int(row), at: Int(boardIndex)))
                var reaching = dayStart + Int64(pattern.arrival(trip: Int(row), at: Int(alightIndex)))
                if usesRealtime, let prediction = query.realtime.predictions[TripInstance(trip: trip, day: day, shift: pattern.shifts[Int(row)])] {
                    let boarding = prediction.prediction(at: Int32(start) + boardIndex)
                    let alighting = prediction.prediction(at: Int32(start) + alightIndex)
                    guard !boarding.cancelled, !alighting.cancelled else { return nil }
                    leaving += Int64(boarding.departureDelay ?? 0)
                    reaching += Int64(alighting.arrivalDelay ?? 0)
                }
                legs.append(
                    .ride(
                        Journey.Ride(
                            trip: trip, day: day, shift: pattern.shifts[Int(row)], board: start + Int(boardIndex), alight: start + Int(alightIndex),
                            departure: leaving, arrival: reaching)))
                stop = network.searchStop[Int(pattern.stops[Int(boardIndex)])]
                round -= 1
            }
            afterWalk = false
        }
    }
}
