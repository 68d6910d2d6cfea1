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
    // GTFS Fares v2.
    public var fareMedia: [FareMedia] = []
    public var riderCategories: [RiderCategory] = []
    public var fareProducts: [FareProduct] = []
    public var fareLegRules: [FareLegRule] = []
    public var fareLegJoinRules: [FareLegJoinRule] = []
    public var fareTransferRules: [FareTransferRule] = []
    public var areas: [FareArea] = []
    public var stopAreas: [StopArea] = []
    public var networks: [FareNetwork] = []
    public var routeNetworks: [RouteNetwork] = []
    public var timeframes: [Timeframe] = []
    public var feedInfo: FeedInfo?

    public init() {}

    /// The time zone every stop time is written in (all agencies share it).
    public var timezone: String { agencies.first?.timezone ?? "UTC" }

    /// Rows of every file the feed had, for import statistics.
    public var rowCount: Int {
        agencies.count + stops.count + routes.count + trips.count + stopTimes.count + calendars.count + calendarExceptions.count
            + frequencies.count + transfers.count + shapes.count + fareAttributes.count + fareRules.count + faresV2RowCount + (feedInfo == nil ? 0 : 1)
    }

    /// Rows of the GTFS Fares v2 files.
    public var faresV2RowCount: Int {
        fareMedia.count + riderCategories.count + fareProducts.count + fareLegRules.count + fareLegJoinRules.count + fareTransferRules.count + areas.count
            + stopAreas.count + networks.count + routeNetworks.count + timeframes.count
    }

    /// Holds the calendar within `maxDays` days and returns the days kept, or nil when it
    /// already fit. The days kept start a year before `today` (or at the feed's first day,
    /// if later, or early enough to end on its last day): what riders ask about now and for
    /// years ahead.
    ///
    /// Why: the calendar index has a bit per day and service, so its cost follows the span;
    /// 302 services to 9999-12-31 took nine minutes to import and to load.
    public mutating func boundServiceDays(maxDays: Int, today: Int32) -> ClosedRange<Int32>? {
        guard let range = serviceDayRange, maxDays > 0, Int(range.upperBound) - Int(range.lowerBound) + 1 > maxDays else { return nil }
        let span = Int32(maxDays - 1)
        let start = max(range.lowerBound, min(today - 366, range.upperBound - span))
        let kept = start...(start + span)
        for index in calendars.indices {
            calendars[index].startDay = max(calendars[index].startDay, kept.lowerBound)
            calendars[index].endDay = min(calendars[index].endDay, kept.upperBound)
        }
        calendarExceptions.removeAll { !kept.contains($0.day) }
        return kept
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
