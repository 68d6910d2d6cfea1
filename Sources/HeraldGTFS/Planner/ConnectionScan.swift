/// Earliest arrival by a connection scan (CSA, Dibbelt et al. 2013): every connection (one stop
/// time to the next of a trip running that day) in departure order, over the service day
/// before, of and after `day`, under the planner's rules — the minimum change after a ride,
/// footpaths after a ride and from the origin, never two in a row.
///
/// Why it is here: it answers one question (the earliest arrival, not the Pareto set) in a way
/// that shares nothing with RAPTOR's rounds, so the tests hold the planner to it and the
/// benchmark measures the planner against it. The connections are built and sorted once.
public struct ConnectionScan: Sendable {
    struct Connection: Sendable {
        let departure: Int64
        let arrival: Int64
        let from: Int32
        let to: Int32
        /// The trip on its service day, numbered from 0.
        let trip: Int32
        /// The departure's position in the stop time table: within a run, connections with
        /// equal times (stops a minute-rounded timetable gives the same time) stay in trip order.
        let position: Int32
        let canBoard: Bool
        let canAlight: Bool
    }

    let connections: [Connection]
    let network: TransitNetwork
    let stopCount: Int
    let tripCount: Int
    public var connectionCount: Int { connections.count }

    public init(timetable t: Timetable, network: TransitNetwork, day: Int32) {
        let times = t.feed.stopTimes
        var connections: [Connection] = []
        var occurrence: Int32 = 0
        for serviceDay in (day - 1)...(day + 1) {
            let start = t.zone.serviceDayStart(serviceDay)
            for trip in 0..<t.feed.trips.count {
                guard t.calendar.isActive(service: t.feed.trips[trip].service, day: serviceDay) else { continue }
                let range = times.range(trip: Int32(trip))
                guard range.count >= 2, range.allSatisfy({ times.departure[$0] >= 0 && times.arrival[$0] >= 0 }) else { continue }
                // A frequency-based trip runs once per headway (frequencies.txt), its times shifted.
                var shifts: [Int32] = [0]
                if let periods = t.frequenciesByTrip[Int32(trip)] {
                    let base = times.departure[range.lowerBound]
                    shifts = periods.filter { $0.headway > 0 }.flatMap { stride(from: $0.start, to: $0.end, by: Int($0.headway)).map { $0 - base } }
                }
                for shift in shifts {
                    defer { occurrence += 1 }
                    for position in range.dropLast() {
                        connections.append(
                            Connection(
                                departure: start + Int64(times.departure[position] + shift), arrival: start + Int64(times.arrival[position + 1] + shift),
                                from: times.stop[position], to: times.stop[position + 1], trip: occurrence, position: Int32(position),
                                canBoard: times.pickupType[position] != 1, canAlight: times.dropOffType[position + 1] != 1))
                    }
                }
            }
        }
        connections.sort { ($0.departure, $0.arrival, $0.position) < ($1.departure, $1.arrival, $1.position) }
        self.connections = connections
        self.network = network
        stopCount = t.feed.stops.count
        tripCount = Int(occurrence)
    }

    /// The earliest arrival at `to` leaving `from` at or after `at`; nil when none.
    ///
    /// Why a stop keeps two times: when a rider may board there next (`ready`: a ride's
    /// arrival plus the minimum change, a walk's arrival as it is) is not its earliest arrival.
    /// A ride reaching a stop at 16:54:00 makes the 16:54:54 departure missable (a change needs
    /// 60 s), while a walk reaching it at 16:54:32 catches it; keeping only the earliest
    /// arrival and how it came lost the walk, and with it the earlier journey the planner found.
    public func earliestArrival(from: Int32, to: Int32, at: Int64) -> Int64? {
        var arrival = [Int64](repeating: .max, count: stopCount)
        var ready = [Int64](repeating: .max, count: stopCount)
        // Walks start from rides: the earliest ride arrival at a stop is kept apart, as a walk
        // may have reached the stop earlier and still be no start for another walk.
        var rideArrival = [Int64](repeating: .max, count: stopCount)
        var onBoard = [Bool](repeating: false, count: tripCount)
        arrival[Int(from)] = at
        ready[Int(from)] = at
        for path in network.footpaths[Int(from)] {
            let walked = at + Int64(path.seconds)
            arrival[Int(path.to)] = min(arrival[Int(path.to)], walked)
            ready[Int(path.to)] = min(ready[Int(path.to)], walked)
        }
        let change = Int64(network.walking.minimumChangeSeconds)
        var low = 0
        var high = connections.count
        while low < high {
            let mid = (low + high) / 2
            if connections[mid].departure < at { low = mid + 1 } else { high = mid }
        }
        for index in low..<connections.count {
            let connection = connections[index]
            if connection.departure >= arrival[Int(to)] { break }
            if !onBoard[Int(connection.trip)] {
                guard connection.canBoard, ready[Int(connection.from)] <= connection.departure else { continue }
                onBoard[Int(connection.trip)] = true
            }
            guard connection.canAlight, connection.arrival < rideArrival[Int(connection.to)] else { continue }
            rideArrival[Int(connection.to)] = connection.arrival
            arrival[Int(connection.to)] = min(arrival[Int(connection.to)], connection.arrival)
            ready[Int(connection.to)] = min(ready[Int(connection.to)], connection.arrival + change)
            for path in network.footpaths[Int(connection.to)] {
                let walked = connection.arrival + Int64(path.seconds)
                arrival[Int(path.to)] = min(arrival[Int(path.to)], walked)
                ready[Int(path.to)] = min(ready[Int(path.to)], walked)
            }
        }
        return arrival[Int(to)] == .max ? nil : arrival[Int(to)]
    }
}
