/// The realtime feeds laid over one timetable version: predictions per trip run, trips the
/// feed added, vehicles by run and by route, and the alerts.
///
/// Built whenever a realtime feed or the timetable changes (milliseconds for thousands of
/// entities), then read by every answer without locks. A trip update names its run by
/// `trip_id` plus `start_date` (and `start_time` for frequency trips); without a date the
/// run of today's or yesterday's service day nearest to now is meant, as producers intend.
public struct RealtimeOverlay: Sendable {
    /// A trip the realtime feed adds (`ADDED`, `NEW`, `REPLACEMENT`): its stops and times
    /// come from the update, not the timetable.
    public struct AddedTrip: Sendable, Equatable {
        public struct StopTime: Sendable, Equatable {
            public var stop: Int32
            public var arrival: Int64?
            public var departure: Int64?
            public var cancelled: Bool
        }

        public var id: String
        public var route: Int32
        public var directionID: Int8
        public var headsign: String?
        public var stops: [StopTime]
        public var vehicle: RealtimeVehicleDescriptor?
        /// When it replaces a scheduled run (`REPLACEMENT`), that run.
        public var replaces: TripInstance?
    }

    /// A vehicle position matched to its run and route where the feed says which.
    public struct Vehicle: Sendable, Equatable {
        public var position: RealtimeVehicle
        public var instance: TripInstance?
        public var route: Int32
    }

    public var predictions: [TripInstance: TripPrediction] = [:]
    public var added: [AddedTrip] = []
    /// Added trips' stop times by stop: (index in `added`, index in its `stops`).
    public var addedByStop: [Int32: [(trip: Int, stop: Int)]] = [:]
    public var vehicles: [Vehicle] = []
    public var vehicleByInstance: [TripInstance: Int] = [:]
    public var vehicleByTripID: [String: Int] = [:]
    public var alerts: [RealtimeAlert] = []
    /// Updates that name a trip, stop or run this timetable does not have.
    public var unmatched = 0
    /// How far back a departures board must look for late vehicles.
    public var lookbackSeconds: Int32 = 0
    /// How far ahead of its schedule any prediction runs (seconds, at most an hour): how far
    /// the journey planner looks past the scheduled times for an early departure.
    public var earlySeconds: Int32 = 0
    /// Runs that skip some of their stops (`TripPrediction.skipsStops`), which the journey
    /// planner rides apart from their patterns.
    public var runsSkippingStops: [TripInstance] = []

    public init() {}

    public static let empty = RealtimeOverlay()

    /// Lays `feeds` over `timetable` as of `now`. Where two feeds speak of the same run, the
    /// later one (by entity timestamp, then feed timestamp, then order) wins.
    public init(feeds: [RealtimeFeed], timetable: Timetable, now: Int64) {
        var stamps: [TripInstance: Int64] = [:]
        var addedIndex: [String: Int] = [:]
        for feed in feeds {
            for update in feed.tripUpdates {
                let stamp = update.timestamp ?? feed.timestamp ?? 0
                if update.trip.relationship.addsTrip {
                    guard let trip = Self.addedTrip(update, timetable: timetable, now: now) else {
                        unmatched += 1
                        continue
                    }
                    if let existing = addedIndex[trip.id] {
                        added[existing] = trip
                    } else {
                        addedIndex[trip.id] = added.count
                        added.append(trip)
                    }
                    if let replaced = trip.replaces { predictions[replaced] = TripPrediction(canceled: true, timestamp: stamp) }
                    continue
                }
                guard let instance = Self.instance(update.trip, timetable: timetable, now: now) else {
                    unmatched += 1
                    continue
                }
                if let previous = stamps[instance], previous > stamp { continue }
                stamps[instance] = stamp
                if update.trip.relationship.removesTrip {
                    predictions[instance] = TripPrediction(canceled: true, vehicle: update.vehicle, timestamp: update.timestamp)
                    continue
                }
                let (prediction, misses) = Self.prediction(update, instance: instance, timetable: timetable)
                unmatched += misses
                predictions[instance] = prediction
                lookbackSeconds = max(lookbackSeconds, min(prediction.maximumDelay, 4 * 3600))
                earlySeconds = max(earlySeconds, min(prediction.maximumEarliness, 3600))
            }
        }
        runsSkippingStops = predictions.filter { $0.value.skipsStops }.map(\.key).sorted { ($0.trip, $0.day, $0.shift) < ($1.trip, $1.day, $1.shift) }
        for (index, trip) in added.enumerated() {
            for (position, stopTime) in trip.stops.enumerated() {
                addedByStop[stopTime.stop, default: []].append((index, position))
            }
        }
        var vehicleStamps: [String: (Int64, Int)] = [:]
        for feed in feeds {
            for position in feed.vehicles {
                let instance = position.trip.flatMap { Self.instance($0, timetable: timetable, now: now) }
                var route: Int32 = -1
                if let instance {
                    route = timetable.feed.trips[Int(instance.trip)].route
                } else if let routeID = position.trip?.routeID, let index = timetable.routesByID[routeID] {
                    route = index
                } else if let tripID = position.trip?.tripID, let index = addedIndex[tripID] {
                    route = added[index].route
                }
                let key = position.vehicle?.id ?? position.entityID
                let stamp = position.timestamp ?? feed.timestamp ?? 0
                if let (previous, _) = vehicleStamps[key], previous > stamp { continue }
                let vehicle = Vehicle(position: position, instance: instance, route: route)
                if let (_, index) = vehicleStamps[key] {
                    vehicles[index] = vehicle
                    vehicleStamps[key] = (stamp, index)
                } else {
                    vehicleStamps[key] = (stamp, vehicles.count)
                    vehicles.append(vehicle)
                }
            }
            alerts.append(contentsOf: feed.alerts)
        }
        for (index, vehicle) in vehicles.enumerated() {
            if let instance = vehicle.instance { vehicleByInstance[instance] = index }
            if let tripID = vehicle.position.trip?.tripID { vehicleByTripID[tripID] = index }
        }
    }

    /// The run a descriptor names, or nil when the timetable has no such trip or run.
    public static func instance(_ descriptor: RealtimeTripDescriptor, timetable: Timetable, now: Int64) -> TripInstance? {
        guard let tripID = descriptor.tripID, let trip = timetable.tripsByID[tripID] else { return nil }
        let stopTimes = timetable.feed.stopTimes
        let range = stopTimes.range(trip: trip)
        guard range.count >= 2 else { return nil }
        var shift: Int32 = 0
        if timetable.frequenciesByTrip[trip] != nil {
            // A frequency run is named by its start time.
            guard let start = descriptor.startTime else { return nil }
            shift = start - stopTimes.departure[range.lowerBound]
        }
        if let day = descriptor.startDay { return TripInstance(trip: trip, day: day, shift: shift) }
        let service = timetable.feed.trips[Int(trip)].service
        let span = timetable.tripSpans[Int(trip)]
        let today = timetable.zone.localDay(now)
        var best: (day: Int32, distance: Int64)?
        for day in (today - 2)...(today + 1) where timetable.calendar.isActive(service: service, day: day) {
            let start = timetable.zone.serviceDayStart(day) + Int64(shift)
            let first = start + Int64(span.lowerBound)
            let last = start + Int64(span.upperBound)
            let distance = now < first ? first - now : (now > last ? now - last : 0)
            if best == nil || distance < best!.distance { best = (day, distance) }
        }
        return best.map { TripInstance(trip: trip, day: $0.day, shift: shift) }
    }

    /// A scheduled trip's update as delays at stop positions; also how many stop time
    /// updates named no stop of the trip.
    static func prediction(_ update: RealtimeTripUpdate, instance: TripInstance, timetable: Timetable) -> (TripPrediction, Int) {
        let stopTimes = timetable.feed.stopTimes
        let range = stopTimes.range(trip: instance.trip)
        let dayStart = timetable.zone.serviceDayStart(instance.day) + Int64(instance.shift)
        var updates: [TripPrediction.Update] = []
        var misses = 0
        var searchFrom = range.lowerBound
        for stopUpdate in update.stopTimeUpdates {
            var position: Int?
            if let sequence = stopUpdate.stopSequence {
                position = stopTimes.position(trip: instance.trip, sequence: sequence)
            } else if let stopID = stopUpdate.stopID, let stop = timetable.stopsByID[stopID] {
                position = (searchFrom..<range.upperBound).first { stopTimes.stop[$0] == stop }
            }
            guard let position else {
                misses += 1
                continue
            }
            searchFrom = position + 1
            func delay(_ event: RealtimeStopTimeEvent?, scheduled: Int32) -> Int32? {
                guard let event else { return nil }
                // An absolute time a week or more from the schedule is no prediction for this
                // run (as a delay that large is not: `RealtimeBounds`).
                if let time = event.time { return RealtimeBounds.delay(Int32(clamping: time - (dayStart + Int64(scheduled)))) }
                return event.delay
            }
            updates.append(
                TripPrediction.Update(
                    position: Int32(position), arrivalDelay: delay(stopUpdate.arrival, scheduled: stopTimes.arrival[position]),
                    departureDelay: delay(stopUpdate.departure, scheduled: stopTimes.departure[position]), relationship: stopUpdate.relationship))
        }
        return (TripPrediction(canceled: false, tripDelay: update.delay, updates: updates, vehicle: update.vehicle, timestamp: update.timestamp), misses)
    }

    /// A trip the feed adds, from its stop time updates' absolute times; nil when it names
    /// no stop this timetable has.
    static func addedTrip(_ update: RealtimeTripUpdate, timetable: Timetable, now: Int64) -> AddedTrip? {
        guard let id = update.trip.tripID else { return nil }
        var stops: [AddedTrip.StopTime] = []
        for stopUpdate in update.stopTimeUpdates {
            guard let stopID = stopUpdate.stopID, let stop = timetable.stopsByID[stopID] else { continue }
            let arrival = stopUpdate.arrival?.time ?? stopUpdate.arrival?.scheduledTime
            let departure = stopUpdate.departure?.time ?? stopUpdate.departure?.scheduledTime
            guard arrival != nil || departure != nil || stopUpdate.relationship == .skipped else { continue }
            stops.append(
                AddedTrip.StopTime(stop: stop, arrival: arrival ?? departure, departure: departure ?? arrival, cancelled: stopUpdate.relationship == .skipped))
        }
        guard !stops.isEmpty else { return nil }
        var route: Int32 = -1
        var direction = Int8(update.trip.directionID ?? -1)
        var headsign: String?
        var replaces: TripInstance?
        if update.trip.relationship == .replacement, let instance = instance(update.trip, timetable: timetable, now: now) {
            let trip = timetable.feed.trips[Int(instance.trip)]
            route = trip.route
            direction = trip.directionID
            headsign = trip.headsign
            replaces = instance
        }
        if let routeID = update.trip.routeID, let index = timetable.routesByID[routeID] { route = index }
        return AddedTrip(id: id, route: route, directionID: direction, headsign: headsign, stops: stops, vehicle: update.vehicle, replaces: replaces)
    }
}
