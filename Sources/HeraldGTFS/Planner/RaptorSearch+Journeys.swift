extension RaptorSearch {
    func reconstruct(round: Int, stop: Int32, egress: Int32) -> Journey? {
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
