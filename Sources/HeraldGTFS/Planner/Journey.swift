/// One way to make the trip: legs in order, leaving and arriving at absolute times (epoch seconds).
public struct Journey: Sendable, Equatable {
    /// A ride on one run of a trip: its service day, its shift (a frequency run; 0 otherwise),
    /// the stop times it boards and alights at (positions in the feed's stop time table), and
    /// the times the planner used, the realtime prediction where there is one.
    public struct Ride: Sendable, Equatable {
        public let trip: Int32
        public let day: Int32
        public let shift: Int32
        public let board: Int
        public let alight: Int
        public let departure: Int64
        public let arrival: Int64

        public init(trip: Int32, day: Int32, shift: Int32 = 0, board: Int, alight: Int, departure: Int64, arrival: Int64) {
            self.trip = trip
            self.day = day
            self.shift = shift
            self.board = board
            self.alight = alight
            self.departure = departure
            self.arrival = arrival
        }
    }

    public enum Leg: Sendable, Equatable {
        /// On foot: from the origin (`from` nil) or a stop, to a stop or the destination (`to` nil).
        case walk(from: Int32?, to: Int32?, departure: Int64, arrival: Int64)
        case ride(Ride)

        public var departure: Int64 {
            switch self {
            case .walk(_, _, let departure, _): departure
            case .ride(let ride): ride.departure
            }
        }

        public var arrival: Int64 {
            switch self {
            case .walk(_, _, _, let arrival): arrival
            case .ride(let ride): ride.arrival
            }
        }

        public var ride: Ride? {
            if case .ride(let ride) = self { return ride }
            return nil
        }
    }

    public let legs: [Leg]

    public init(legs: [Leg]) {
        self.legs = legs
    }

    public var departure: Int64 { legs.first?.departure ?? 0 }
    public var arrival: Int64 { legs.last?.arrival ?? 0 }
    public var rides: Int { legs.filter { $0.ride != nil }.count }
    public var transfers: Int { max(0, rides - 1) }
}
