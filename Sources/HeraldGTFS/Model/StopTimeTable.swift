/// Every stop time of a feed, grouped by trip and ordered by `stop_sequence`, as parallel
/// arrays: 18 bytes a stop time, against ~100 for an array of structs with strings.
///
/// The stop times of trip `t` are the positions `tripStart[t] ..< tripStart[t + 1]`.
/// Times are seconds since the service day's start; times the feed left empty between two
/// timepoints are interpolated (by distance along the stops) and flagged in `given`.
public struct StopTimeTable: Sendable, Equatable {
    public var tripStart: [Int32] = [0]
    public var stop: [Int32] = []
    public var arrival: [Int32] = []
    public var departure: [Int32] = []
    public var sequence: [Int32] = []
    public var pickupType: [UInt8] = []
    public var dropOffType: [UInt8] = []
    /// Bit 0: the arrival time was in the feed; bit 1: the departure time was; bits 2–3:
    /// `timepoint` + 1 (0 when absent).
    public var given: [UInt8] = []
    /// `stop_headsign`, where a stop time has one.
    public var headsigns: [Int32: String] = [:]
    /// `shape_dist_traveled`, where the feed gives it (NaN elsewhere); empty if never given.
    public var distances: [Float] = []

    public init() {}

    public var count: Int { stop.count }

    public func range(trip: Int32) -> Range<Int> {
        Int(tripStart[Int(trip)])..<Int(tripStart[Int(trip) + 1])
    }

    /// The position of `stop_sequence` within the trip, by binary search.
    public func position(trip: Int32, sequence wanted: Int32) -> Int? {
        var low = Int(tripStart[Int(trip)])
        var high = Int(tripStart[Int(trip) + 1])
        while low < high {
            let mid = (low + high) / 2
            if sequence[mid] < wanted { low = mid + 1 } else { high = mid }
        }
        return low < Int(tripStart[Int(trip) + 1]) && sequence[low] == wanted ? low : nil
    }

    /// Bytes held by the arrays (for the memory figure per stop time).
    public var byteCount: Int {
        tripStart.capacity * 4 + stop.capacity * 4 + arrival.capacity * 4 + departure.capacity * 4 + sequence.capacity * 4
            + pickupType.capacity + dropOffType.capacity + given.capacity + distances.capacity * 4 + headsigns.count * 48
    }
}
