/// One run of a scheduled trip on one service day: the unit realtime data is about.
public struct TripInstance: Hashable, Sendable {
    public var trip: Int32
    public var day: Int32
    /// Shift of a frequency run from the trip's stop times (0 for timetabled trips).
    public var shift: Int32

    public init(trip: Int32, day: Int32, shift: Int32 = 0) {
        self.trip = trip
        self.day = day
        self.shift = shift
    }
}

/// A trip update resolved against the timetable: its stop time updates located at stop
/// time positions, with every absolute time turned into a delay against the schedule.
///
/// Why it is a value with one rule (`prediction(at:)`): the GTFS-Realtime propagation
/// rules are subtle and worth testing alone. A stop time update's delay holds for the
/// following stops until the next update; a `SKIPPED` stop is cancelled there but the delay
/// before it carries over it; `NO_DATA` means no prediction from there until the next
/// update; stops before the first update get the trip-level delay, if any, else none.
public struct TripPrediction: Sendable, Equatable {
    public struct Update: Sendable, Equatable {
        public var position: Int32
        public var arrivalDelay: Int32?
        public var departureDelay: Int32?
        public var relationship: RealtimeStopTimeUpdate.Relationship

        public init(position: Int32, arrivalDelay: Int32? = nil, departureDelay: Int32? = nil, relationship: RealtimeStopTimeUpdate.Relationship = .scheduled) {
            self.position = position
            self.arrivalDelay = arrivalDelay
            self.departureDelay = departureDelay
            self.relationship = relationship
        }
    }

    /// What is known about one stop of the trip.
    public struct Stop: Sendable, Equatable {
        /// nil: no prediction (show the schedule).
        public var arrivalDelay: Int32?
        public var departureDelay: Int32?
        /// The vehicle will not stop here (a skipped stop, or a cancelled trip).
        public var cancelled: Bool

        public static let unknown = Stop(arrivalDelay: nil, departureDelay: nil, cancelled: false)
    }

    public var canceled: Bool
    public var tripDelay: Int32?
    /// Sorted by position.
    public var updates: [Update]
    public var vehicle: RealtimeVehicleDescriptor?
    public var timestamp: Int64?

    /// Whether the run skips a stop it is scheduled to serve (and still runs): the journey
    /// planner cannot treat it as one of its pattern's runs.
    public var skipsStops: Bool { !canceled && updates.contains { $0.relationship == .skipped } }

    public init(canceled: Bool = false, tripDelay: Int32? = nil, updates: [Update] = [], vehicle: RealtimeVehicleDescriptor? = nil, timestamp: Int64? = nil) {
        self.canceled = canceled
        self.tripDelay = tripDelay
        self.updates = updates.sorted { $0.position < $1.position }
        self.vehicle = vehicle
        self.timestamp = timestamp
    }

    public func prediction(at position: Int32) -> Stop {
        if canceled { return Stop(arrivalDelay: nil, departureDelay: nil, cancelled: true) }
        // The last update at or before the position.
        var low = 0
        var high = updates.count
        while low < high {
            let mid = (low + high) / 2
            if updates[mid].position <= position { low = mid + 1 } else { high = mid }
        }
        let index = low - 1
        guard index >= 0 else { return Stop(arrivalDelay: tripDelay, departureDelay: tripDelay, cancelled: false) }
        let update = updates[index]
        if update.position == position {
            switch update.relationship {
            case .skipped: return Stop(arrivalDelay: nil, departureDelay: nil, cancelled: true)
            case .noData: return .unknown
            case .scheduled, .unscheduled:
                let arrival = update.arrivalDelay ?? update.departureDelay
                let departure = update.departureDelay ?? update.arrivalDelay
                guard arrival != nil || departure != nil else { return carried(before: index) }
                return Stop(arrivalDelay: arrival, departureDelay: departure, cancelled: false)
            }
        }
        return carried(before: index + 1)
    }

    /// The delay carried to a stop after `updates[..<end]`: from the last of them that is
    /// not skipped (delay propagates over skipped stops).
    func carried(before end: Int) -> Stop {
        var index = end - 1
        while index >= 0 {
            let update = updates[index]
            switch update.relationship {
            case .skipped:
                index -= 1
                continue
            case .noData:
                return .unknown
            case .scheduled, .unscheduled:
                if let delay = update.departureDelay ?? update.arrivalDelay {
                    return Stop(arrivalDelay: delay, departureDelay: delay, cancelled: false)
                }
                index -= 1
                continue
            }
        }
        return Stop(arrivalDelay: tripDelay, departureDelay: tripDelay, cancelled: false)
    }

    /// The most seconds ahead of schedule any stop can be (0 when none runs early).
    public var maximumEarliness: Int32 {
        var result = max(0, -(tripDelay ?? 0))
        for update in updates {
            result = max(result, -(update.arrivalDelay ?? 0), -(update.departureDelay ?? 0))
        }
        return result
    }

    /// The largest delay any stop can carry (how far back a departures board must look for
    /// late vehicles).
    public var maximumDelay: Int32 {
        var result = max(0, tripDelay ?? 0)
        for update in updates {
            result = max(result, update.arrivalDelay ?? 0, update.departureDelay ?? 0)
        }
        return result
    }
}
