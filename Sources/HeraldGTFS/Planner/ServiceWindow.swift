/// The runs of three consecutive service days — the day before a query's (only its runs
/// still running when the query's day begins), the query's day and the next — of every
/// pattern, on one time axis: seconds since the first day's start. Built on a day's first query and kept by the planner
/// (`ServiceWindowCache`) as long as its feed version serves.
///
/// Why: the search for a stop's next run is then one binary search over one day's worth of
/// 32-bit times with the other days' services already left out, instead of one search per
/// day with the service checked per run; a pattern that does not run in the window has no
/// lanes and is never scanned; and the scan adds nothing to a time it reads.
///
/// Why lanes: a pattern's runs never overtake each other on one day (`TransitNetwork`), but
/// a day apart they can (yesterday's slow run at 24:00 and today's fast one at 00:05), so the
/// merged runs are split again, greedily, into lanes whose runs do not overtake: almost
/// always one lane per pattern.
final class ServiceWindow: Sendable {
    /// The first of the three service days, and each day's start (epoch seconds); the axis
    /// starts at `dayStarts[0]`.
    let firstDay: Int32
    let dayStarts: [Int64]
    /// Each day's start on the axis.
    let dayOffsets: [Int32]
    /// Pattern p's lanes are `patternLanes[p]..<patternLanes[p + 1]`.
    let patternLanes: [Int32]
    /// Lane l's runs are `laneRuns[l]..<laneRuns[l + 1]` in `runRows`/`runDays`, in departure
    /// order; its times start at `laneTimes[l]`: runs × stops departures in `departures`, stop
    /// by stop (run k at position i is at i × runs + k, so a binary search reads contiguous
    /// memory), and the same times again in `rideTimes`, run by run with each arrival beside
    /// its departure (at 2 × (k × stops + i) and the next), so a ride, and the check whether
    /// the run before it could be caught instead, read along the run.
    let laneRuns: [Int32]
    let laneTimes: [Int]
    /// Per lane: its pattern.
    let lanePatterns: [Int32]
    /// Per run: its row in the pattern and its day (0, 1 or 2).
    let runRows: [Int32]
    let runDays: [UInt8]
    let departures: FrozenBuffer<Int32>
    let rideTimes: FrozenBuffer<Int32>
    /// Per search stop (`TransitNetwork.searchStop`): the lanes through it and its position in
    /// each, `stopLanes[stopLaneStart[s]..<stopLaneStart[s + 1]]`. Only patterns running in the window are there, so a round
    /// queues nothing that has no run to ride.
    let stopLaneStart: FrozenBuffer<Int32>
    let stopLanes: FrozenBuffer<LaneStop>

    struct LaneStop: BitwiseCopyable {
        let lane: Int32
        let index: Int32
    }

    var origin: Int64 { dayStarts[0] }
    var lastDay: Int32 { firstDay + 2 }

    /// The window around `day` (the query's local day).
    init(network: TransitNetwork, calendar: ServiceCalendar, zone: AgencyTimeZone, day: Int32) {
        firstDay = day - 1
        let starts = (0..<3).map { zone.serviceDayStart(day - 1 + Int32($0)) }
        dayStarts = starts
        let offsets = starts.map { Int32($0 - starts[0]) }
        dayOffsets = offsets
        let words = (0..<3).map { calendar.words(day: day - 1 + Int32($0)) }
        var patternLanes: [Int32] = [0]
        var laneRuns: [Int32] = [0]
        var laneTimes: [Int] = [0]
        var lanePatterns: [Int32] = []
        var runRows: [Int32] = []
        var runDays: [UInt8] = []
        var departures: [Int32] = []
        var rideTimes: [Int32] = []
        struct Run {
            let row: Int
            let day: Int
            let start: Int32
        }
        var runs: [Run] = []
        var lanes: [[Run]] = []
        for (number, pattern) in network.patterns.enumerated() {
            let stops = pattern.stops.count
            runs.removeAll(keepingCapacity: true)
            for day in 0..<3 {
                for row in pattern.trips.indices {
                    let service = Int(network.tripService[Int(pattern.trips[row])])
                    // The day before's runs that leave their last stop before the query's day
                    // begins (an hour early, for a change of clocks) can never be boarded.
                    if day == 0 && (0..<stops).allSatisfy({ pattern.departure(trip: row, at: $0) < offsets[1] - 3600 }) { continue }
                    if words[day][service >> 6] & (1 << UInt64(service & 63)) != 0 {
                        runs.append(Run(row: row, day: day, start: offsets[day] + pattern.departure(trip: row, at: 0)))
                    }
                }
            }
            runs.sort { ($0.start, $0.day, $0.row) < ($1.start, $1.day, $1.row) }
            // A run of the same day and a later row never overtakes (the pattern is FIFO);
            // runs of different days are compared stop by stop.
            func overtakes(_ run: Run, _ last: Run) -> Bool {
                if run.day == last.day { return run.row < last.row }
                return (0..<stops).contains { index in
                    offsets[run.day] + pattern.departure(trip: run.row, at: index) < offsets[last.day] + pattern.departure(trip: last.row, at: index)
                        || offsets[run.day] + pattern.arrival(trip: run.row, at: index) < offsets[last.day] + pattern.arrival(trip: last.row, at: index)
                }
            }
            lanes.removeAll(keepingCapacity: true)
            for run in runs {
                if let lane = lanes.firstIndex(where: { !overtakes(run, $0.last!) }) {
                    lanes[lane].append(run)
                } else {
                    lanes.append([run])
                }
            }
            for lane in lanes {
                for run in lane {
                    runRows.append(Int32(run.row))
                    runDays.append(UInt8(run.day))
                }
                for index in 0..<stops {
                    for run in lane { departures.append(offsets[run.day] + pattern.departure(trip: run.row, at: index)) }
                }
                for run in lane {
                    for index in 0..<stops {
                        rideTimes.append(offsets[run.day] + pattern.arrival(trip: run.row, at: index))
                        rideTimes.append(offsets[run.day] + pattern.departure(trip: run.row, at: index))
                    }
                }
                laneRuns.append(Int32(runRows.count))
                laneTimes.append(departures.count)
                lanePatterns.append(Int32(number))
            }
            patternLanes.append(Int32(laneRuns.count - 1))
        }
        self.patternLanes = patternLanes
        self.laneRuns = laneRuns
        self.laneTimes = laneTimes
        self.lanePatterns = lanePatterns
        self.runRows = runRows
        self.runDays = runDays
        self.departures = FrozenBuffer(departures)
        self.rideTimes = FrozenBuffer(rideTimes)
        var atStop = [[LaneStop]](repeating: [], count: network.stopCount)
        for (lane, pattern) in lanePatterns.enumerated() {
            for (index, stop) in network.patterns[Int(pattern)].stops.enumerated() {
                atStop[Int(network.searchStop[Int(stop)])].append(LaneStop(lane: Int32(lane), index: Int32(index)))
            }
        }
        stopLaneStart = FrozenBuffer([0] + atStop.reduce(into: [Int32]()) { starts, list in starts.append((starts.last ?? 0) + Int32(list.count)) })
        stopLanes = FrozenBuffer(atStop.flatMap { $0 })
    }

    var laneCount: Int { lanePatterns.count }

    /// The number of runs in lane `lane`.
    func runCount(_ lane: Int) -> Int { Int(laneRuns[lane + 1] - laneRuns[lane]) }

    /// Bytes held (the figure `BENCHMARKS.md` reports per window).
    var bytes: Int {
        (departures.count + rideTimes.count) * 4 + runRows.count * 5 + laneRuns.count * 12 + patternLanes.count * 4 + stopLanes.count * 8 + stopLaneStart.count
            * 4
    }
}
