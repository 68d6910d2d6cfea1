/// A trip on one service day.
public struct TripDay: Sendable, Hashable {
    public let trip: Int32
    public let day: Int32

    public init(trip: Int32, day: Int32) {
        self.trip = trip
        self.day = day
    }
}
