/// A `stop_areas.txt` row (GTFS Fares v2): a stop (or a station, and so its platforms that
/// are in no area of their own) belongs to an area. A stop may be in several areas.
public struct StopArea: Sendable, Equatable {
    public var areaID: String
    public var stopID: String

    public init(areaID: String, stopID: String) {
        self.areaID = areaID
        self.stopID = stopID
    }
}
