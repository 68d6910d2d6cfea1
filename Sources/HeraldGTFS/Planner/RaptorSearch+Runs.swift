extension RaptorSearch {
    /// The pattern row, service day and trip of run `run` of lane `lane`.
    func ride(lane: Int, _ run: Int) -> (row: Int, day: Int32, trip: Int32) {
        let index = Int(window.laneRuns[lane]) + run
        let row = Int(window.runRows[index])
        return (row, window.firstDay + Int32(window.runDays[index]), network.patterns[Int(window.lanePatterns[lane])].trips[row])
    }

    func prediction(lane: Int, _ run: Int) -> TripPrediction? {
        guard usesRealtime else { return nil }
        let (row, day, trip) = ride(lane: lane, run)
        return query.realtime.predictions[TripInstance(trip: trip, day: day, shift: network.patterns[Int(window.lanePatterns[lane])].shifts[row])]
    }

    /// A run's scheduled time at position `index` moved by its prediction there; nil when it
    /// does not stop there (skipped, cancelled).
    private func predicted(_ scheduled: Int32, lane: Int, _ run: Int, _ index: Int, _ prediction: TripPrediction?, arriving: Bool) -> Int32? {
        guard let prediction else { return scheduled }
        let position = timetable.feed.stopTimes.tripStart[Int(ride(lane: lane, run).trip)] + Int32(index)
        let stop = prediction.prediction(at: position)
        if stop.cancelled { return nil }
        return Self.axis(Int64(scheduled) + Int64((arriving ? stop.arrivalDelay : stop.departureDelay) ?? 0))
    }

    /// When the run leaves position `index`; nil when it does not stop there.
    func departure(lane: Int, _ run: Int, _ index: Int, _ prediction: TripPrediction?) -> Int32? {
        let scheduled = window.departures.base[window.laneTimes[lane] + index * window.runCount(lane) + run]
        return predicted(scheduled, lane: lane, run, index, prediction, arriving: false)
    }

    /// When the run reaches position `index`; nil when it does not stop there.
    func arrival(lane: Int, _ run: Int, _ index: Int, _ prediction: TripPrediction?) -> Int32? {
        let pattern = Int(window.lanePatterns[lane])
        let stops = Int(network.patternStopStart[pattern + 1] - network.patternStopStart[pattern])
        let scheduled = window.rideTimes.base[2 * (window.laneTimes[lane] + run * stops + index)]
        return predicted(scheduled, lane: lane, run, index, prediction, arriving: true)
    }

    /// Whether the query lets `trip` be ridden on `day` (wheelchair, trips it cancels).
    private func rideable(_ trip: Int32, day: Int32) -> Bool {
        (!query.wheelchairOnly || network.tripAccessible[Int(trip)])
            && (query.cancelled.isEmpty || !query.cancelled.contains(TripDay(trip: trip, day: day)))
    }

    /// The run of the lane leaving position `index` (its departures: `column`) first at or
    /// after `notBefore`. Without realtime the first rideable run from the binary search's
    /// answer is it; with realtime, runs within the largest delay and earliness around the
    /// scheduled time are compared by predicted departure.
    func earliestRun(lane: Int, index: Int, column: UnsafePointer<Int32>, notBefore: Int32) -> (run: Int, time: Int32)? {
        let runs = window.runCount(lane)
        let wanted = notBefore &- late
        guard runs > 0, column[runs - 1] >= wanted else { return nil }
        var found: (run: Int, time: Int32)?
        for run in Self.firstAtOrAfter(wanted, column, last: runs - 1)..<runs {
            let scheduled = column[run]
            if let found, scheduled &- early >= found.time { break }
            let (_, day, trip) = ride(lane: lane, run)
            if filtered && !rideable(trip, day: day) { continue }
            guard usesRealtime else { return (run, scheduled) }
            let prediction = prediction(lane: lane, run)
            // A run that skips stops is ridden on its own (`detached`).
            if prediction?.skipsStops == true { continue }
            guard let time = departure(lane: lane, run, index, prediction), time >= notBefore else { continue }
            if found == nil || time < found!.time { found = (run, time) }
        }
        return found
    }

    /// Without realtime, with runs filtered out: the earliest rideable run leaving before
    /// `current` (whose departure is at or after `notBefore`) and at or after `notBefore`;
    /// nil when none does (`current` stays the best).
    func earlierRun(lane: Int, column: UnsafePointer<Int32>, notBefore: Int32, than current: Int) -> (run: Int, time: Int32)? {
        var found: (run: Int, time: Int32)?
        var run = current - 1
        while run >= 0, column[run] >= notBefore {
            let (_, day, trip) = ride(lane: lane, run)
            if rideable(trip, day: day) { found = (run, column[run]) }
            run -= 1
        }
        return found
    }
}
