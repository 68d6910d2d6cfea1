/// One lane of a service window as a scan reads it: its pattern's stops (search stops) and
/// rules, its runs' departures stop by stop and times run by run, as pointers into the
/// network's and the window's read-only memory (`FrozenBuffer`), valid while the search holds
/// both.
struct LaneView {
    /// Stops of the pattern, and runs in the lane.
    let count: Int
    let runs: Int
    let stops: UnsafePointer<Int32>
    let rules: UnsafePointer<UInt8>
    /// Run k's departure at position i at `i × runs + k`.
    let departures: UnsafePointer<Int32>
    /// Run k's arrival at position i at `2 × (k × count + i)`, its departure just after.
    let times: UnsafePointer<Int32>

    init(network: TransitNetwork, window: ServiceWindow, lane: Int, pattern: Int) {
        let stopStart = Int(network.patternStopStart[pattern])
        count = Int(network.patternStopStart[pattern + 1]) - stopStart
        stops = network.scanStops.base + stopStart
        rules = network.scanRules.base + stopStart
        runs = window.runCount(lane)
        departures = window.departures.base + window.laneTimes[lane]
        times = window.rideTimes.base + 2 * window.laneTimes[lane]
    }
}
