import Foundation
import HeraldCore
import HeraldGTFS

/// Journey planning (`POST /trips/plan`) on the timetable this node serves.
///
/// Why an owner of its own: a plan is dozens of searches on threads of their own
/// (`PlannerPool`), shed when the pool is full; the pool and its limits belong to planning
/// alone, and it only reads the served feeds.
public final class TransitPlanning: Sendable {
    let config: TransitConfig
    let served: ServedFeeds
    let statistics: TransitStatistics
    /// Journey searches: threads of their own, fair between callers (`PlannerPool`).
    public let pool: PlannerPool

    init(config: TransitConfig, served: ServedFeeds, statistics: TransitStatistics) {
        self.config = config
        self.served = served
        self.statistics = statistics
        pool = PlannerPool(
            threads: config.planner.threads ?? max(1, ProcessInfo.processInfo.activeProcessorCount - 1), queueLimit: config.planner.maxQueued,
            maxWait: .milliseconds(config.planner.maxQueueMs))
    }

    /// The itineraries for a request, in the transit app's shape, planned on the first feed (in
    /// configuration order) that has both ends. Runs off the cooperative pool: a range or
    /// `arrive_by` request is a few dozen searches.
    /// `client`: who asks (a user, or an address), for the planner's fair share.
    public func plan(_ request: TripPlanRequest, client: String = "") async throws -> JSONValue {
        let snapshot = served.snapshot
        guard !snapshot.isEmpty else { throw TransitError.noTimetable }
        let settings = config.planner
        var failure: APIError?
        for feed in snapshot.feeds {
            guard let planner = feed.planner else {
                failure = failure ?? TransitError.plannerNotReady
                continue
            }
            let ends = [(request.origin, "origin", "Origin"), (request.destination, "destination", "Destination")].map { place, field, name in
                (PlaceEnd.resolve(place, feed: feed, network: planner.network, maxWalkingMeters: request.maxWalkingMeters, fallbackName: name), place, field)
            }
            var resolved: [PlaceEnd] = []
            for (resolution, place, field) in ends {
                switch resolution {
                case .found(let end): resolved.append(end)
                case .unknownStop:
                    if case .stop(let id) = place { failure = failure ?? TransitError.stopNotFound(id) }
                case .outOfReach: failure = failure ?? TransitError.outsideServiceArea(field, meters: request.maxWalkingMeters)
                }
            }
            guard resolved.count == 2 else { continue }
            let timetable = feed.timetable
            let time: Int64
            switch request.when {
            case .departAt(let start, _): time = start
            case .arriveBy(let deadline): time = deadline
            }
            let day = timetable.zone.localDay(time)
            guard let days = timetable.calendar.days, day >= days.lowerBound, day <= days.upperBound + 1 else {
                throw TransitError.outsideServiceDates(timetable.calendar.days)
            }
            let planning = ItineraryPlanner(
                feed: feed, planner: planner, request: request, origin: resolved[0], destination: resolved[1],
                windowSeconds: Int64(settings.maxWindowMinutes) * 60)
            let journeys: [Journey]
            do {
                journeys = try await planning.itineraries(maxSearches: settings.maxSearchesPerPlan) { [pool] query in
                    try await pool.run(client: client) { planner.plan(query) }
                }
            } catch is PlannerPool.Busy {
                statistics.plannerShed()
                throw TransitError.plannerBusy
            }
            let itineraries = journeys.map {
                ItineraryJSON.itinerary($0, feed: feed, origin: planning.origin, destination: planning.destination, walking: planner.network.walking)
            }
            guard !itineraries.isEmpty else { throw TransitError.noRoute }
            let search: String
            switch request.when {
            case .departAt(_, .none): search = "depart_at"
            case .departAt: search = "depart_between"
            case .arriveBy: search = "arrive_by"
            }
            return [
                "itineraries": .array(itineraries), "requested_time": .string(timetable.zone.iso8601(time)), "search": .string(search),
                "feed": .string(feed.name),
            ]
        }
        throw failure ?? TransitError.noRoute
    }
}
