/// One GTFS feed as Herald holds it: every file parsed and cross-checked, references turned
/// into indices. The timetable index is built from it, and the import writes its rows.
public struct TransitFeed: Sendable, Equatable {
    public var agencies: [Agency] = []
    public var stops: [Stop] = []
    public var routes: [Route] = []
    public var trips: [Trip] = []
    public var stopTimes = StopTimeTable()
    /// service_id of each service index (trips and calendars refer to services by index).
    public var serviceIDs: [String] = []
    public var calendars: [CalendarRule] = []
    public var calendarExceptions: [CalendarException] = []
    public var frequencies: [Frequency] = []
    public var transfers: [Transfer] = []
    public var shapes: [ShapePoint] = []
    public var fareAttributes: [FareAttribute] = []
    public var fareRules: [FareRule] = []
    public var feedInfo: FeedInfo?

    public init() {}

    /// The time zone every stop time is written in (all agencies share it).
    public var timezone: String { agencies.first?.timezone ?? "UTC" }

    /// Rows of every file the feed had, for import statistics.
    public var rowCount: Int {
        agencies.count + stops.count + routes.count + trips.count + stopTimes.count + calendars.count + calendarExceptions.count
            + frequencies.count + transfers.count + shapes.count + fareAttributes.count + fareRules.count + (feedInfo == nil ? 0 : 1)
    }

    /// The first and last dates any service runs, from calendar.txt and calendar_dates.txt.
    public var serviceDayRange: ClosedRange<Int32>? {
        var low = Int32.max
        var high = Int32.min
        for rule in calendars {
            low = min(low, rule.startDay)
            high = max(high, rule.endDay)
        }
        for exception in calendarExceptions where exception.added {
            low = min(low, exception.day)
            high = max(high, exception.day)
        }
        return low <= high ? low...high : nil
    }
}
