/// A journey planning question: where from (stops with the walk to each), where to (stops with
/// the walk from each; a negative walk counts as none, one longer than a day makes the stop no
/// way in or out), when, and what may be used.
public struct JourneyQuery: Sendable {
    public var origins: [(stop: Int32, walkSeconds: Int32)]
    public var destinations: [(stop: Int32, walkSeconds: Int32)]
    /// Leave at or after this instant (epoch seconds).
    public var departAt: Int64
    public var maxTransfers: Int = 4
    /// Only trips marked accessible (`wheelchair_accessible = 1`) and stops that are not
    /// marked inaccessible.
    public var wheelchairOnly = false
    /// Trips that do not run, besides those the realtime data cancels: (trip, service day).
    public var cancelled: Set<TripDay> = []
    /// Routes that may be ridden (nil: all), by route index.
    public var routes: Set<Int32>?
    /// The realtime data to plan on: predicted departures and arrivals instead of scheduled
    /// ones, cancelled trips and skipped stops left out. Trips the feed adds are not ridden.
    public var realtime: RealtimeOverlay = .empty

    public init(origins: [(stop: Int32, walkSeconds: Int32)], destinations: [(stop: Int32, walkSeconds: Int32)], departAt: Int64) {
        self.origins = origins
        self.destinations = destinations
        self.departAt = departAt
    }
}
