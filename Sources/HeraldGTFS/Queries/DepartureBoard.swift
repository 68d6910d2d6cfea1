/// The next departures at a stop, with realtime laid over the timetable: what
/// `GET /stops/{id}/departures` answers and what `stop:{id}` subscribers are sent.
///
/// A station's departures are those of its platforms. Late vehicles are looked for as far
/// back as the largest delay in the realtime data, so a bus scheduled five minutes ago and
/// running ten late is still listed; a departure whose estimated time has passed is not.
/// Cancelled runs stay on the board (marked) at their scheduled time. Runs the realtime
/// feed adds are listed at their announced times.
public struct DepartureBoard: Sendable {
    public struct Query: Sendable {
        public var stop: Int32
        /// The board's time ("now", or `at=`), epoch seconds.
        public var at: Int64
        public var limit: Int
        public var route: Int32?
        public var directionID: Int8?
        /// How far ahead to look (a stop served once a day still gets its next departure).
        public var horizonSeconds: Int64 = 48 * 3600

        public init(stop: Int32, at: Int64, limit: Int, route: Int32? = nil, directionID: Int8? = nil) {
            self.stop = stop
            self.at = at
            self.limit = limit
            self.route = route
            self.directionID = directionID
        }
    }

    public struct Row: Sendable, Equatable {
        public var tripID: String
        /// The timetable's trip index; -1 for a trip the realtime feed added.
        public var trip: Int32
        public var route: Int32
        /// The stop (platform) the run leaves from.
        public var stop: Int32
        public var day: Int32
        public var shift: Int32
        public var position: Int32
        public var headsign: String?
        public var directionID: Int8
        public var scheduled: Int64
        /// nil: no realtime prediction for this departure.
        public var estimated: Int64?
        public var delay: Int32?
        public var cancelled: Bool
        public var added: Bool
        public var vehicleID: String?
        public var occupancy: String?
        /// A frequency-based run (exact_times 0): the headway is what riders can rely on.
        public var headwaySeconds: Int32?

        public var effective: Int64 { estimated ?? scheduled }
        public var instance: TripInstance { TripInstance(trip: trip, day: day, shift: shift) }
    }

    public let timetable: Timetable
    public let overlay: RealtimeOverlay

    public init(timetable: Timetable, overlay: RealtimeOverlay) {
        self.timetable = timetable
        self.overlay = overlay
    }

    /// The stops a board for `stop` covers: itself, or a station's platforms.
    public func boardingStops(_ stop: Int32) -> [Int32] {
        var stops = [stop]
        for child in timetable.childrenByStop[stop] ?? [] where timetable.feed.stops[Int(child)].locationType == .stop {
            stops.append(child)
        }
        return stops
    }

    public func departures(_ query: Query) -> [Row] {
        let feed = timetable.feed
        let lookback = Int64(overlay.lookbackSeconds)
        var rows: [Row] = []
        let accept: (Int32) -> Bool = { trip in
            let record = feed.trips[Int(trip)]
            if let route = query.route, record.route != route { return false }
            if let direction = query.directionID, record.directionID != direction { return false }
            return true
        }
        for stop in boardingStops(query.stop) {
            let scheduled = timetable.departures(
                stop: stop, from: query.at - lookback, countFrom: query.at, until: query.at + query.horizonSeconds, limit: query.limit, accept: accept)
            for departure in scheduled {
                let instance = TripInstance(trip: departure.trip, day: departure.day, shift: departure.shift)
                let prediction = overlay.predictions[instance]
                let stopPrediction = prediction?.prediction(at: departure.position) ?? .unknown
                let delay = stopPrediction.cancelled ? nil : stopPrediction.departureDelay
                let estimated = delay.map { departure.time + Int64($0) }
                if (estimated ?? departure.time) < query.at { continue }
                let trip = feed.trips[Int(departure.trip)]
                var row = Row(
                    tripID: trip.id, trip: departure.trip, route: trip.route, stop: stop, day: departure.day, shift: departure.shift,
                    position: departure.position, headsign: feed.stopTimes.headsigns[departure.position] ?? trip.headsign, directionID: trip.directionID,
                    scheduled: departure.time, estimated: estimated, delay: delay, cancelled: stopPrediction.cancelled, added: false)
                if let index = overlay.vehicleByInstance[instance] {
                    let vehicle = overlay.vehicles[index].position
                    row.vehicleID = vehicle.vehicle?.id ?? vehicle.vehicle?.label
                    row.occupancy = vehicle.occupancyStatus
                } else if let vehicle = prediction?.vehicle {
                    row.vehicleID = vehicle.id ?? vehicle.label
                }
                if let periods = timetable.frequenciesByTrip[departure.trip], periods.contains(where: { !$0.exactTimes }) {
                    row.headwaySeconds = periods.first { period in
                        let start = feed.stopTimes.departure[feed.stopTimes.range(trip: departure.trip).lowerBound] + departure.shift
                        return start >= period.start && start < period.end
                    }.map(\.headway)
                }
                rows.append(row)
            }
            for (tripIndex, stopIndex) in overlay.addedByStop[stop] ?? [] {
                let trip = overlay.added[tripIndex]
                guard stopIndex < trip.stops.count - 1, let time = trip.stops[stopIndex].departure,
                    time >= query.at, time <= query.at + query.horizonSeconds
                else { continue }
                if let route = query.route, trip.route != route { continue }
                if let direction = query.directionID, trip.directionID != direction { continue }
                rows.append(
                    Row(
                        tripID: trip.id, trip: -1, route: trip.route, stop: stop, day: timetable.zone.localDay(time), shift: 0, position: Int32(stopIndex),
                        headsign: trip.headsign, directionID: trip.directionID, scheduled: time, estimated: time, delay: nil,
                        cancelled: trip.stops[stopIndex].cancelled, added: true, vehicleID: trip.vehicle?.id ?? trip.vehicle?.label))
            }
        }
        rows.sort { ($0.effective, $0.scheduled, $0.tripID) < ($1.effective, $1.scheduled, $1.tripID) }
        return Array(rows.prefix(query.limit))
    }
}
