/// One service day's runs of every pattern, the runs of other days left out, with their
/// departures stop by stop.
///
/// Why: a pattern holds the runs of every service (weekdays, Saturdays, school days…), so the
/// search for a stop's next run would step over the runs that do not run that day (nine rows
/// per search on Halifax's feed, each a look into the trip's service). Here the first run at
/// or after a time is the answer: one binary search. Built on a day's first query and kept by
/// the planner (`ServiceDayCache`) as long as its feed version serves.
struct ServiceDayRuns: Sendable {
    let day: Int32
    /// Per pattern: where its runs start in `rows` (one entry more than there are patterns).
    let rowStart: [Int32]
    /// The pattern rows running that day, in the pattern's (departure) order.
    let rows: [Int32]
    /// Per pattern: where its departures start in `departures`, stored stop by stop (the
    /// departure of the k-th run of the day at position i is at start + i × runs + k).
    let departureStart: [Int]
    let departures: [Int32]

    init(network: TransitNetwork, calendar: ServiceCalendar, day: Int32) {
        self.day = day
        let words = calendar.words(day: day)
        var rowStart: [Int32] = [0]
        var rows: [Int32] = []
        var departureStart: [Int] = [0]
        var departures: [Int32] = []
        rowStart.reserveCapacity(network.patterns.count + 1)
        departureStart.reserveCapacity(network.patterns.count + 1)
        var active: [Int] = []
        for pattern in network.patterns {
            active.removeAll(keepingCapacity: true)
            for row in pattern.trips.indices {
                let service = Int(network.tripService[Int(pattern.trips[row])])
                if words[service >> 6] & (1 << UInt64(service & 63)) != 0 { active.append(row) }
            }
            for row in active { rows.append(Int32(row)) }
            rowStart.append(Int32(rows.count))
            for index in pattern.stops.indices {
                for row in active { departures.append(pattern.departure(trip: row, at: index)) }
            }
            departureStart.append(departures.count)
        }
        self.rowStart = rowStart
        self.rows = rows
        self.departureStart = departureStart
        self.departures = departures
    }

    /// The number of runs of pattern `pattern` that day.
    func runCount(_ pattern: Int) -> Int { Int(rowStart[pattern + 1] - rowStart[pattern]) }
}
