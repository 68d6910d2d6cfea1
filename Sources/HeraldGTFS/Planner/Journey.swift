/// One way to make the trip: legs in order, leaving and arriving at absolute times (epoch seconds).
public struct Journey: Sendable, Equatable {
    public enum Leg: Sendable, Equatable {
        /// On foot: from the origin (`from` nil) or a stop, to a stop or the destination (`to` nil).
        case walk(from: Int32?, to: Int32?, departure: Int64, arrival: Int64)
        /// On board `trip` (its service day `day`) from its stop time at `board` to the one at
        /// `alight` (positions in the feed's stop time table).
        case ride(trip: Int32, day: Int32, board: Int, alight: Int, departure: Int64, arrival: Int64)

        public var departure: Int64 {
            switch self {
            case .walk(_, _, let departure, _), .ride(_, _, _, _, let departure, _): departure
            }
        }

        public var arrival: Int64 {
            switch self {
            case .walk(_, _, _, let arrival), .ride(_, _, _, _, _, let arrival): arrival
            }
        }
    }

    public let legs: [Leg]

    public var departure: Int64 { legs.first?.departure ?? 0 }
    public var arrival: Int64 { legs.last?.arrival ?? 0 }
    public var rides: Int { legs.filter { if case .ride = $0 { true } else { false } }.count }
    public var transfers: Int { max(0, rides - 1) }
}

/// A journey planning question: where from (stops with the walk to each), where to (stops with
/// the walk from each), when, and what may be used.
public struct JourneyQuery: Sendable {
    public var origins: [(stop: Int32, walkSeconds: Int32)]
    public var destinations: [(stop: Int32, walkSeconds: Int32)]
    /// Leave at or after this instant (epoch seconds).
    public var departAt: Int64
    public var maxTransfers: Int = 4
    /// Only trips marked accessible (`wheelchair_accessible = 1`) and stops that are not
    /// marked inaccessible.
    public var wheelchairOnly = false
    /// Trips that do not run (a realtime cancellation): (trip, service day).
    public var cancelled: Set<TripDay> = []

    public init(origins: [(stop: Int32, walkSeconds: Int32)], destinations: [(stop: Int32, walkSeconds: Int32)], departAt: Int64) {
        self.origins = origins
        self.destinations = destinations
        self.departAt = departAt
    }
}

/// A trip on one service day.
public struct TripDay: Sendable, Hashable {
    public let trip: Int32
    public let day: Int32

    public init(trip: Int32, day: Int32) {
        self.trip = trip
        self.day = day
    }
}
