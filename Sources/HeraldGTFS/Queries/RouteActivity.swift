/// The runs of a route under way at a moment, each with its vehicle (when the realtime
/// feed places one) and its next stops: what `GET /routes/{id}/trips` answers and
/// `route:{id}` subscribers follow.
///
/// A run is under way from its first departure to its last arrival, both with the
/// realtime delay where there is one (a late run is still under way after its scheduled
/// end); a cancelled run is not. Runs the realtime feed adds to the route are included.
public struct RouteActivity: Sendable {
    public struct NextStop: Sendable, Equatable {
        public var stop: Int32
        public var scheduledArrival: Int64
        public var estimatedArrival: Int64?
    }

    public struct Run: Sendable, Equatable {
        public var tripID: String
        public var instance: TripInstance?
        public var headsign: String?
        public var directionID: Int8
        public var vehicle: RealtimeVehicle?
        public var nextStops: [NextStop]
    }

    public let timetable: Timetable
    public let overlay: RealtimeOverlay

    public init(timetable: Timetable, overlay: RealtimeOverlay) {
        self.timetable = timetable
        self.overlay = overlay
    }

    public func runs(route: Int32, at now: Int64, directionID: Int8? = nil, nextStopCount: Int = 3) -> [Run] {
        let feed = timetable.feed
        let stopTimes = feed.stopTimes
        let today = timetable.zone.localDay(now)
        var runs: [Run] = []
        for trip in timetable.tripsByRoute[Int(route)] {
            let record = feed.trips[Int(trip)]
            if let directionID, record.directionID != directionID { continue }
            let span = timetable.tripSpans[Int(trip)]
            let range = stopTimes.range(trip: trip)
            guard range.count >= 2 else { continue }
            var shifts: [Int32] = [0]
            if let periods = timetable.frequenciesByTrip[trip] {
                let base = stopTimes.departure[range.lowerBound]
                shifts = periods.flatMap { period in stride(from: period.start, to: period.end, by: Int(period.headway)).map { $0 - base } }
            }
            for day in (today - 2)...today where timetable.calendar.isActive(service: record.service, day: day) {
                let start = timetable.zone.serviceDayStart(day)
                for shift in shifts {
                    let instance = TripInstance(trip: trip, day: day, shift: shift)
                    let prediction = overlay.predictions[instance]
                    if prediction?.canceled == true { continue }
                    let firstDelay = Int64(prediction?.prediction(at: Int32(range.lowerBound)).departureDelay ?? 0)
                    let lastDelay = Int64(prediction?.prediction(at: Int32(range.upperBound - 1)).arrivalDelay ?? 0)
                    let begins = start + Int64(span.lowerBound + shift) + min(0, firstDelay)
                    let ends = start + Int64(span.upperBound + shift) + max(0, lastDelay)
                    guard begins <= now, now <= ends else { continue }
                    var next: [NextStop] = []
                    for position in range where next.count < nextStopCount {
                        let stop = prediction?.prediction(at: Int32(position)) ?? .unknown
                        if stop.cancelled { continue }
                        let scheduled = start + Int64(stopTimes.arrival[position] + shift)
                        let estimated = stop.arrivalDelay.map { scheduled + Int64($0) }
                        if (estimated ?? scheduled) < now { continue }
                        next.append(NextStop(stop: stopTimes.stop[position], scheduledArrival: scheduled, estimatedArrival: estimated))
                    }
                    let vehicle = overlay.vehicleByInstance[instance].map { overlay.vehicles[$0].position }
                    runs.append(
                        Run(
                            tripID: record.id, instance: instance, headsign: record.headsign, directionID: record.directionID, vehicle: vehicle, nextStops: next
                        ))
                }
            }
        }
        for trip in overlay.added where trip.route == route {
            if let directionID, trip.directionID != directionID { continue }
            guard let first = trip.stops.first?.departure, let last = trip.stops.last?.arrival, first <= now, now <= last else { continue }
            let next = trip.stops.filter { !$0.cancelled && ($0.arrival ?? 0) >= now }.prefix(nextStopCount)
                .map { NextStop(stop: $0.stop, scheduledArrival: $0.arrival ?? 0, estimatedArrival: $0.arrival) }
            let vehicle = overlay.vehicleByTripID[trip.id].map { overlay.vehicles[$0].position }
            runs.append(Run(tripID: trip.id, instance: nil, headsign: trip.headsign, directionID: trip.directionID, vehicle: vehicle, nextStops: Array(next)))
        }
        return runs.sorted { ($0.nextStops.first?.scheduledArrival ?? .max, $0.tripID) < ($1.nextStops.first?.scheduledArrival ?? .max, $1.tripID) }
    }
}
