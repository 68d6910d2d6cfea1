extension RaptorSearch {
    func prediction(_ pattern: TransitNetwork.Pattern, row: Int, day: Int32) -> TripPrediction? {
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
    func earliestRun(_ number: Int32, _ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, days searched: Range<Int>? = nil) -> (
        run: Run, time: Int64
    )? {
        var found: (run: Run, time: Int64)?
        let filtered = query.wheelchairOnly || !query.cancelled.isEmpty
        for dayIndex in searched ?? days.indices {
            let (day, dayStart) = days[dayIndex]
            let runs = dayRuns[dayIndex]
            let first = Int(runs.rowStart[Int(number)])
            let count = Int(runs.rowStart[Int(number) + 1]) - first
            guard count > 0 else { continue }
            let column = runs.departureStart[Int(number)] + index * count
            let wanted = notBefore - late - dayStart
            guard wanted <= Int64(runs.departures[column + count - 1]) else { continue }
            // A later day whose first run leaves after the one found cannot do better.
            if let found, dayStart + Int64(runs.departures[column]) - early >= found.time { continue }
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                if Int64(runs.departures[column + mid]) < wanted { low = mid + 1 } else { high = mid }
            }
            for dayRow in low..<count {
                let scheduled = dayStart + Int64(runs.departures[column + dayRow])
                if let found, scheduled - early >= found.time { break }
                let row = Int(runs.rows[first + dayRow])
                if filtered && !rideable(pattern.trips[row], day: day) { continue }
                let run = Run(row: row, day: day, dayStart: dayStart, dayIndex: dayIndex, dayRow: dayRow)
                guard usesRealtime else {
                    if scheduled >= notBefore, found == nil || scheduled < found!.time { found = (run, scheduled) }
                    break
                }
                let predicted = prediction(pattern, row: row, day: day)
                // A run that skips stops is ridden on its own (`detached`).
                if predicted?.skipsStops == true { continue }
                guard let time = departure(run, pattern, index, predicted), time >= notBefore else { continue }
                if found == nil || time < found!.time { found = (run, time) }
            }
        }
        return found
    }

    /// Whether the query lets `trip` be ridden on `day` (wheelchair, trips it cancels).
    private func rideable(_ trip: Int32, day: Int32) -> Bool {
        (!query.wheelchairOnly || network.tripAccessible[Int(trip)])
            && (query.cancelled.isEmpty || !query.cancelled.contains(TripDay(trip: trip, day: day)))
    }

    /// Without realtime: the earliest run leaving position `index` at or after `notBefore`
    /// and before `current` (whose departure there is at or after `notBefore`); nil when
    /// none does (`current` stays the best).
    func earlierRun(_ number: Int32, _ pattern: TransitNetwork.Pattern, index: Int, notBefore: Int64, than current: Run) -> (run: Run, time: Int64)? {
        var found: (run: Run, time: Int64)?
        let runs = dayRuns[current.dayIndex]
        let first = Int(runs.rowStart[Int(number)])
        let count = Int(runs.rowStart[Int(number) + 1]) - first
        let column = runs.departureStart[Int(number)] + index * count
        let wanted = notBefore - current.dayStart
        if query.wheelchairOnly || !query.cancelled.isEmpty {
            var dayRow = current.dayRow - 1
            while dayRow >= 0, Int64(runs.departures[column + dayRow]) >= wanted {
                let row = Int(runs.rows[first + dayRow])
                if rideable(pattern.trips[row], day: current.day) {
                    found = (
                        Run(row: row, day: current.day, dayStart: current.dayStart, dayIndex: current.dayIndex, dayRow: dayRow),
                        current.dayStart + Int64(runs.departures[column + dayRow])
                    )
                }
                dayRow -= 1
            }
        } else if current.dayRow > 0, Int64(runs.departures[column + current.dayRow - 1]) >= wanted {
            var low = 0
            var high = current.dayRow - 1
            while low < high {
                let mid = (low + high) / 2
                if Int64(runs.departures[column + mid]) < wanted { low = mid + 1 } else { high = mid }
            }
            found = (
                Run(row: Int(runs.rows[first + low]), day: current.day, dayStart: current.dayStart, dayIndex: current.dayIndex, dayRow: low),
                current.dayStart + Int64(runs.departures[column + low])
            )
        }
        if current.dayIndex > 0, let before = earliestRun(number, pattern, index: index, notBefore: notBefore, days: 0..<current.dayIndex),
            before.time < (found?.time ?? .max)
        {
            found = before
        }
        return found
    }
}
