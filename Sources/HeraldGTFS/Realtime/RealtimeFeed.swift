/// A GTFS-Realtime FeedMessage as Herald uses it: trip updates, vehicle positions and
/// alerts with the protobuf's optionals made explicit (a delay of 0 is not "no delay").
///
/// Why a model of our own beside the generated protobuf types: the rest of the module, and
/// its tests, work with these plain values, and the decoder is the one place that knows
/// the wire format (`RealtimeFeedDecoder`).
public struct RealtimeFeed: Sendable, Equatable {
    /// header.timestamp: when the producer made the feed (epoch seconds).
    public var timestamp: Int64?
    /// A differential feed updates the entities it names; a full one replaces everything.
    public var isDifferential = false
    public var tripUpdates: [RealtimeTripUpdate] = []
    public var vehicles: [RealtimeVehicle] = []
    public var alerts: [RealtimeAlert] = []
    /// Entity ids a differential feed deletes.
    public var deletedEntities: [String] = []

    public init() {}

    public var entityCount: Int { tripUpdates.count + vehicles.count + alerts.count }

    /// The message without its trip updates and vehicle positions (a stale source's).
    public var alertsOnly: RealtimeFeed {
        var copy = self
        copy.tripUpdates = []
        copy.vehicles = []
        return copy
    }
}

/// Which trip (instance) an update is about.
public struct RealtimeTripDescriptor: Sendable, Equatable, Hashable {
    public enum Relationship: String, Sendable, Equatable, Hashable {
        case scheduled = "SCHEDULED"
        case added = "ADDED"
        case unscheduled = "UNSCHEDULED"
        case canceled = "CANCELED"
        case replacement = "REPLACEMENT"
        case duplicated = "DUPLICATED"
        case deleted = "DELETED"
        case new = "NEW"

        /// Trips that are not in the static timetable: their stop times come from the update.
        public var addsTrip: Bool { self == .added || self == .new || self == .replacement }
        public var removesTrip: Bool { self == .canceled || self == .deleted }
    }

    public var tripID: String?
    public var routeID: String?
    public var directionID: Int?
    /// start_time in seconds (may pass 24 h), for frequency-based trips.
    public var startTime: Int32?
    /// start_date as a day number.
    public var startDay: Int32?
    public var relationship: Relationship = .scheduled

    public init(
        tripID: String? = nil, routeID: String? = nil, directionID: Int? = nil, startTime: Int32? = nil, startDay: Int32? = nil,
        relationship: Relationship = .scheduled
    ) {
        self.tripID = tripID
        self.routeID = routeID
        self.directionID = directionID
        self.startTime = startTime
        self.startDay = startDay
        self.relationship = relationship
    }
}

public struct RealtimeVehicleDescriptor: Sendable, Equatable {
    public var id: String?
    public var label: String?
    public var licensePlate: String?

    public init(id: String? = nil, label: String? = nil, licensePlate: String? = nil) {
        self.id = id
        self.label = label
        self.licensePlate = licensePlate
    }
}

/// A predicted (or past) arrival or departure at one stop.
public struct RealtimeStopTimeEvent: Sendable, Equatable {
    public var delay: Int32?
    /// Absolute time (epoch seconds); it wins over `delay` when both are given.
    public var time: Int64?
    public var scheduledTime: Int64?

    public init(delay: Int32? = nil, time: Int64? = nil, scheduledTime: Int64? = nil) {
        self.delay = delay
        self.time = time
        self.scheduledTime = scheduledTime
    }
}

public struct RealtimeStopTimeUpdate: Sendable, Equatable {
    public enum Relationship: String, Sendable, Equatable {
        case scheduled = "SCHEDULED"
        case skipped = "SKIPPED"
        case noData = "NO_DATA"
        case unscheduled = "UNSCHEDULED"
    }

    public var stopSequence: Int32?
    public var stopID: String?
    public var arrival: RealtimeStopTimeEvent?
    public var departure: RealtimeStopTimeEvent?
    public var relationship: Relationship = .scheduled
    public var assignedStopID: String?
    public var departureOccupancy: String?

    public init(
        stopSequence: Int32? = nil, stopID: String? = nil, arrival: RealtimeStopTimeEvent? = nil, departure: RealtimeStopTimeEvent? = nil,
        relationship: Relationship = .scheduled
    ) {
        self.stopSequence = stopSequence
        self.stopID = stopID
        self.arrival = arrival
        self.departure = departure
        self.relationship = relationship
    }
}

public struct RealtimeTripUpdate: Sendable, Equatable {
    public var entityID: String
    public var trip: RealtimeTripDescriptor
    public var vehicle: RealtimeVehicleDescriptor?
    public var stopTimeUpdates: [RealtimeStopTimeUpdate]
    public var timestamp: Int64?
    /// Trip-level delay: holds until the first stop time update.
    public var delay: Int32?

    public init(
        entityID: String, trip: RealtimeTripDescriptor, vehicle: RealtimeVehicleDescriptor? = nil, stopTimeUpdates: [RealtimeStopTimeUpdate] = [],
        timestamp: Int64? = nil, delay: Int32? = nil
    ) {
        self.entityID = entityID
        self.trip = trip
        self.vehicle = vehicle
        self.stopTimeUpdates = stopTimeUpdates
        self.timestamp = timestamp
        self.delay = delay
    }
}

public struct RealtimeVehicle: Sendable, Equatable {
    public var entityID: String
    public var trip: RealtimeTripDescriptor?
    public var vehicle: RealtimeVehicleDescriptor?
    public var latitude: Double?
    public var longitude: Double?
    /// Degrees clockwise from north.
    public var bearing: Double?
    /// Metres per second.
    public var speed: Double?
    public var currentStopSequence: Int32?
    public var stopID: String?
    /// INCOMING_AT, STOPPED_AT, IN_TRANSIT_TO.
    public var currentStatus: String?
    public var timestamp: Int64?
    /// GTFS-RT OccupancyStatus name (EMPTY, MANY_SEATS_AVAILABLE, FEW_SEATS_AVAILABLE, …).
    public var occupancyStatus: String?
    public var occupancyPercentage: Int?
    public var congestionLevel: String?

    public init(entityID: String) {
        self.entityID = entityID
    }
}

public struct RealtimeAlert: Sendable, Equatable {
    public struct Period: Sendable, Equatable, Hashable {
        public var start: Int64?
        public var end: Int64?

        public init(start: Int64? = nil, end: Int64? = nil) {
            self.start = start
            self.end = end
        }

        public func contains(_ instant: Int64) -> Bool {
            (start.map { $0 <= instant } ?? true) && (end.map { instant < $0 } ?? true)
        }
    }

    /// What an alert is about: any combination narrows it (route 10 at stop 6121).
    public struct InformedEntity: Sendable, Equatable, Hashable {
        public var agencyID: String?
        public var routeID: String?
        public var routeType: Int?
        public var directionID: Int?
        public var trip: RealtimeTripDescriptor?
        public var stopID: String?

        public init(
            agencyID: String? = nil, routeID: String? = nil, routeType: Int? = nil, directionID: Int? = nil, trip: RealtimeTripDescriptor? = nil,
            stopID: String? = nil
        ) {
            self.agencyID = agencyID
            self.routeID = routeID
            self.routeType = routeType
            self.directionID = directionID
            self.trip = trip
            self.stopID = stopID
        }
    }

    public var id: String
    public var activePeriods: [Period] = []
    public var informedEntities: [InformedEntity] = []
    /// GTFS-RT Cause name (TECHNICAL_PROBLEM, STRIKE, …).
    public var cause: String = "UNKNOWN_CAUSE"
    /// GTFS-RT Effect name (NO_SERVICE, REDUCED_SERVICE, SIGNIFICANT_DELAYS, DETOUR, …).
    public var effect: String = "UNKNOWN_EFFECT"
    public var url: String?
    public var header: String?
    public var description: String?
    /// GTFS-RT SeverityLevel name (UNKNOWN_SEVERITY, INFO, WARNING, SEVERE).
    public var severityLevel: String = "UNKNOWN_SEVERITY"

    public init(id: String) {
        self.id = id
    }

    public func isActive(at instant: Int64) -> Bool {
        activePeriods.isEmpty || activePeriods.contains { $0.contains(instant) }
    }
}
