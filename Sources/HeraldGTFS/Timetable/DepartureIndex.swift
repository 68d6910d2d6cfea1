/// For each stop, every time a trip leaves it, sorted by time of day: the index a
/// departures board is read from.
///
/// Stored as one array per field, cut into slices by stop (`offsets`), 12 bytes an entry.
/// A stop time is a departure when a rider can board there: not the trip's last stop, and
/// `pickup_type` is not 1 (no pickup). Frequency-based trips (frequencies.txt) are
/// expanded here into one entry per run, so they are answered like any other trip.
public struct DepartureIndex: Sendable, Equatable {
    /// Entries of stop `s` are `offsets[s] ..< offsets[s + 1]`.
    let offsets: [Int32]
    /// Departure time, seconds since the service day's start (runs of frequency trips shifted).
    public let times: [Int32]
    /// The stop time (position in `StopTimeTable`) the entry departs from.
    public let positions: [Int32]
    public let trips: [Int32]
    /// Earliest and latest time of any entry (0 when empty).
    public let earliest: Int32
    public let latest: Int32

    public init(feed: TransitFeed) {
        let stopTimes = feed.stopTimes
        let stopCount = feed.stops.count
        var frequenciesByTrip: [Int32: [Frequency]] = [:]
        for frequency in feed.frequencies { frequenciesByTrip[frequency.trip, default: []].append(frequency) }

        // Each trip's runs: shifts applied to its stop times (one run of 0 unless frequencies.txt has it).
        func runs(_ trip: Int32, _ range: Range<Int>) -> [Int32] {
            guard let periods = frequenciesByTrip[trip] else { return [0] }
            let base = stopTimes.departure[range.lowerBound]
            var shifts: [Int32] = []
            for period in periods {
                var start = period.start
                while start < period.end {
                    shifts.append(start - base)
                    start += period.headway
                }
            }
            return shifts
        }
        func boards(_ position: Int, _ range: Range<Int>) -> Bool {
            position < range.upperBound - 1 && stopTimes.pickupType[position] != 1 && stopTimes.departure[position] >= 0
        }

        var counts = [Int32](repeating: 0, count: stopCount + 1)
        var tripRuns: [[Int32]] = []
        tripRuns.reserveCapacity(feed.trips.count)
        for trip in 0..<feed.trips.count {
            let range = stopTimes.range(trip: Int32(trip))
            let shifts = range.count >= 2 ? runs(Int32(trip), range) : []
            tripRuns.append(shifts)
            guard !shifts.isEmpty else { continue }
            for position in range where boards(position, range) {
                counts[Int(stopTimes.stop[position]) + 1] += Int32(shifts.count)
            }
        }
        for stop in 0..<stopCount { counts[stop + 1] += counts[stop] }
        let total = Int(counts[stopCount])
        var times = [Int32](repeating: 0, count: total)
        var positions = [Int32](repeating: 0, count: total)
        var trips = [Int32](repeating: 0, count: total)
        var next = counts
        var earliest = Int32.max
        var latest = Int32.min
        for trip in 0..<feed.trips.count {
            let shifts = tripRuns[trip]
            guard !shifts.isEmpty else { continue }
            let range = stopTimes.range(trip: Int32(trip))
            for position in range where boards(position, range) {
                let stop = Int(stopTimes.stop[position])
                for shift in shifts {
                    let slot = Int(next[stop])
                    next[stop] += 1
                    let time = stopTimes.departure[position] + shift
                    times[slot] = time
                    positions[slot] = Int32(position)
                    trips[slot] = Int32(trip)
                    earliest = min(earliest, time)
                    latest = max(latest, time)
                }
            }
        }
        // Sort each stop's slice by time (then trip, for a stable order).
        for stop in 0..<stopCount {
            let range = Int(counts[stop])..<Int(counts[stop + 1])
            guard range.count > 1 else { continue }
            var sortedAlready = true
            for i in (range.lowerBound + 1)..<range.upperBound where times[i - 1] > times[i] || (times[i - 1] == times[i] && trips[i - 1] > trips[i]) {
                sortedAlready = false
                break
            }
            if sortedAlready { continue }
            let order = range.sorted { (times[$0], trips[$0]) < (times[$1], trips[$1]) }
            let (t, p, r) = (order.map { times[$0] }, order.map { positions[$0] }, order.map { trips[$0] })
            for (offset, slot) in range.enumerated() {
                times[slot] = t[offset]
                positions[slot] = p[offset]
                trips[slot] = r[offset]
            }
        }
        self.offsets = counts
        self.times = times
        self.positions = positions
        self.trips = trips
        self.earliest = total > 0 ? earliest : 0
        self.latest = total > 0 ? latest : 0
    }

    public var count: Int { times.count }

    public func range(stop: Int32) -> Range<Int> {
        Int(offsets[Int(stop)])..<Int(offsets[Int(stop) + 1])
    }

    /// The first entry of `stop` at or after `time` (seconds of the service day).
    public func firstIndex(stop: Int32, atOrAfter time: Int32) -> Int {
        var low = Int(offsets[Int(stop)])
        var high = Int(offsets[Int(stop) + 1])
        while low < high {
            let mid = (low + high) / 2
            if times[mid] < time { low = mid + 1 } else { high = mid }
        }
        return low
    }

    public var byteCount: Int { offsets.capacity * 4 + times.capacity * 4 + positions.capacity * 4 + trips.capacity * 4 }
}
