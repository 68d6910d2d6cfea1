/// How late the runs a delay alert is about are, from the realtime predictions laid over
/// the timetable: what fills the transit design's `ALERT_BODY_DELAY_SHORT` ("%@ min delay
/// due to %@"), whose minutes an alert's own text does not carry in a machine-readable form.
///
/// Why the median of each run's largest delay: one run stuck behind a failure should not
/// speak for the line, nor should the runs that have not reached it yet; a median of the runs
/// delayed by a minute or more is what a rider at a stop of the line will most likely meet.
public enum AlertDelay {
    /// Whole minutes (rounded up), or nil when no named run or run of a named route is a
    /// minute or more late.
    public static func minutes(entities: [RealtimeAlert.InformedEntity], timetable t: Timetable, overlay: RealtimeOverlay) -> Int? {
        var routes: Set<Int32> = []
        var trips: Set<Int32> = []
        for entity in entities {
            if let tripID = entity.trip?.tripID, let trip = t.tripsByID[tripID] {
                trips.insert(trip)
            } else if let routeID = entity.routeID ?? entity.trip?.routeID, let route = t.routesByID[routeID] {
                routes.insert(route)
            }
        }
        guard !routes.isEmpty || !trips.isEmpty else { return nil }
        var delays: [Int32] = []
        for (instance, prediction) in overlay.predictions where !prediction.canceled {
            guard trips.contains(instance.trip) || routes.contains(t.feed.trips[Int(instance.trip)].route) else { continue }
            let delay = prediction.maximumDelay
            if delay >= 60 { delays.append(delay) }
        }
        guard !delays.isEmpty else { return nil }
        delays.sort()
        let median = Int(delays[delays.count / 2])
        return (median + 59) / 60
    }
}
