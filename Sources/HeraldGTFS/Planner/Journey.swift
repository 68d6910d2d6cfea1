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
