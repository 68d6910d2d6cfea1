/// A `timeframes.txt` row (GTFS Fares v2): on the days `service` runs, local times from
/// `start` (included) to `end` (excluded), in seconds since local midnight (0…86,400).
public struct Timeframe: Sendable, Equatable {
    public var groupID: String
    public var start: Int32
    public var end: Int32
    /// Index of the service (as `Trip.service`).
    public var service: Int32

    public init(groupID: String, start: Int32, end: Int32, service: Int32) {
        self.groupID = groupID
        self.start = start
        self.end = end
        self.service = service
    }
}
