/// One loaded feed version, indexed for answering: departures by stop and time, stops by
/// place, routes by stop, ids to indices, service days in the agency's zone.
///
/// Why in memory and immutable: departures are asked for far more often than a feed
/// changes, and a SQL scan per request would cost milliseconds where this costs
/// microseconds. A new feed version is built beside the one in use and swapped in whole,
/// so a reader holds one consistent version for its whole answer.
public final class Timetable: Sendable {
    public let feed: TransitFeed
    public let zone: AgencyTimeZone
    public let calendar: ServiceCalendar
    public let departures: DepartureIndex
    public let grid: StopGrid
    public let stopsByID: [String: Int32]
    public let routesByID: [String: Int32]
    public let tripsByID: [String: Int32]
    /// Routes serving each stop (by stop index), in route order.
    public let routesByStop: [[Int32]]
    /// Children (platforms, entrances, …) of each station.
    public let childrenByStop: [Int32: [Int32]]
    /// frequencies.txt rows by trip.
    public let frequenciesByTrip: [Int32: [Frequency]]
    /// Each trip's scheduled span (first departure … last arrival), seconds of the service day.
    public let tripSpans: [ClosedRange<Int32>]
    /// Trips of each route (by route index).
    public let tripsByRoute: [[Int32]]

    public init(feed: TransitFeed) throws(TimetableError) {
        let days = feed.serviceDayRange
        let fromYear = days.map { ServiceDate.civil($0.lowerBound - 2).year } ?? 2000
        let toYear = days.map { ServiceDate.civil($0.upperBound + 3).year } ?? 2000
        guard let zone = AgencyTimeZone(identifier: feed.timezone, fromYear: fromYear, toYear: toYear) else {
            throw .unknownTimeZone(feed.timezone)
        }
        self.feed = feed
        self.zone = zone
        calendar = ServiceCalendar(feed: feed)
        departures = DepartureIndex(feed: feed)
        grid = StopGrid(feed: feed)
        stopsByID = Dictionary(uniqueKeysWithValues: feed.stops.enumerated().map { ($1.id, Int32($0)) })
        routesByID = Dictionary(uniqueKeysWithValues: feed.routes.enumerated().map { ($1.id, Int32($0)) })
        tripsByID = Dictionary(uniqueKeysWithValues: feed.trips.enumerated().map { ($1.id, Int32($0)) })
        var serving = [Set<Int32>](repeating: [], count: feed.stops.count)
        var spans: [ClosedRange<Int32>] = []
        spans.reserveCapacity(feed.trips.count)
        for (trip, record) in feed.trips.enumerated() {
            let range = feed.stopTimes.range(trip: Int32(trip))
            for position in range { serving[Int(feed.stopTimes.stop[position])].insert(record.route) }
            if range.count >= 2, feed.stopTimes.departure[range.lowerBound] >= 0 {
                spans.append(
                    feed.stopTimes.departure[range.lowerBound]...max(feed.stopTimes.departure[range.lowerBound], feed.stopTimes.arrival[range.upperBound - 1]))
            } else {
                spans.append(0...0)
            }
        }
        var children: [Int32: [Int32]] = [:]
        for (index, stop) in feed.stops.enumerated() where stop.parent >= 0 {
            children[stop.parent, default: []].append(Int32(index))
        }
        // A station is served by what serves its platforms.
        for (station, platforms) in children {
            for platform in platforms { serving[Int(station)].formUnion(serving[Int(platform)]) }
        }
        routesByStop = serving.map { $0.sorted() }
        childrenByStop = children
        var frequencies: [Int32: [Frequency]] = [:]
        for frequency in feed.frequencies { frequencies[frequency.trip, default: []].append(frequency) }
        frequenciesByTrip = frequencies
        tripSpans = spans
        var byRoute = [[Int32]](repeating: [], count: feed.routes.count)
        for (trip, record) in feed.trips.enumerated() { byRoute[Int(record.route)].append(Int32(trip)) }
        tripsByRoute = byRoute
    }

    // MARK: Departures

    /// One run of a trip leaving a stop on a service day.
    public struct ScheduledDeparture: Sendable, Equatable {
        public var trip: Int32
        /// Position of the stop time in `feed.stopTimes`.
        public var position: Int32
        /// The service date the run belongs to.
        public var day: Int32
        /// Shift of a frequency run from the trip's stop times (0 for a timetabled trip).
        public var shift: Int32
        /// Scheduled departure, epoch seconds.
        public var time: Int64
    }

    /// Runs leaving `stop` between `from` and `until` (epoch seconds) in time order, on
    /// every service day that reaches into the window (yesterday's trips after midnight
    /// included). At most `limit` of them at or after `countFrom`; those before it (a
    /// look-back for late vehicles) are all included. `accept` filters by trip.
    public func departures(
        stop: Int32, from: Int64, countFrom: Int64, until: Int64, limit: Int, accept: (Int32) -> Bool = { _ in true }
    ) -> [ScheduledDeparture] {
        guard departures.count > 0, limit > 0, !departures.range(stop: stop).isEmpty else { return [] }
        var result: [ScheduledDeparture] = []
        let firstDay = zone.localDay(from - Int64(departures.latest)) - 1
        let lastDay = zone.localDay(until - Int64(departures.earliest)) + 1
        for day in firstDay...lastDay where calendar.hasService(day: day) {
            let start = zone.serviceDayStart(day)
            let end = departures.range(stop: stop).upperBound
            var index = departures.firstIndex(stop: stop, atOrAfter: Int32(clamping: from - start))
            var counted = 0
            while index < end {
                let time = start + Int64(departures.times[index])
                if time > until { break }
                let trip = departures.trips[index]
                if calendar.isActive(service: feed.trips[Int(trip)].service, day: day) && accept(trip) {
                    let position = departures.positions[index]
                    result.append(
                        ScheduledDeparture(
                            trip: trip, position: position, day: day, shift: departures.times[index] - feed.stopTimes.departure[Int(position)], time: time))
                    if time >= countFrom {
                        counted += 1
                        if counted >= limit { break }
                    }
                }
                index += 1
            }
        }
        result.sort { ($0.time, $0.trip) < ($1.time, $1.trip) }
        var kept: [ScheduledDeparture] = []
        var counted = 0
        for departure in result {
            if departure.time >= countFrom {
                if counted == limit { break }
                counted += 1
            }
            kept.append(departure)
        }
        return kept
    }

    /// Epoch seconds of a stop time of a run.
    public func instant(day: Int32, seconds: Int32, shift: Int32 = 0) -> Int64 {
        zone.serviceDayStart(day) + Int64(seconds + shift)
    }

    public var byteCount: Int {
        feed.stopTimes.byteCount + departures.byteCount + calendar.byteCount + grid.byteCount + tripSpans.capacity * 8
            + routesByStop.reduce(0) { $0 + 16 + $1.capacity * 4 }
    }
}

public enum TimetableError: Error, Equatable, Sendable {
    case unknownTimeZone(String)
}
