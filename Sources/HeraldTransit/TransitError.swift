import HeraldCore
import HeraldGTFS

/// The transit module's client errors, with their stable codes.
public enum TransitError {
    public static func stopNotFound(_ id: String) -> APIError {
        APIError(status: 404, code: "STOP_NOT_FOUND", message: "No stop has this id.", details: ["stop_id": .string(String(id.prefix(200)))])
    }

    public static func routeNotFound(_ id: String) -> APIError {
        APIError(status: 404, code: "ROUTE_NOT_FOUND", message: "No route has this id.", details: ["route_id": .string(String(id.prefix(200)))])
    }

    public static let favoriteNotFound = APIError(status: 404, code: "FAVORITE_NOT_FOUND", message: "You have no favourite with this id.")

    public static func favoriteExists(_ id: String) -> APIError {
        APIError(status: 409, code: "FAVORITE_EXISTS", message: "This stop is already a favourite.", details: ["id": .string(id)])
    }

    public static func favoritesFull(_ limit: Int) -> APIError {
        APIError(
            status: 409, code: "FAVORITES_LIMIT_REACHED", message: "You have \(limit) favourites, the most there can be.",
            details: ["limit": .number(Double(limit))])
    }

    public static let noTimetable = APIError(
        status: 503, code: "TIMETABLE_NOT_LOADED", message: "No timetable is loaded yet: import a GTFS feed (herald transit import).",
        headers: ["Retry-After": "60"])

    public static func feedNotFound(_ name: String) -> APIError {
        APIError(status: 404, code: "FEED_NOT_FOUND", message: "No feed has this name.", details: ["feed": .string(String(name.prefix(64)))])
    }

    public static func alertNotFound(_ id: String) -> APIError {
        APIError(status: 404, code: "ALERT_NOT_FOUND", message: "No alert has this id for you.", details: ["alert_id": .string(String(id.prefix(200)))])
    }

    public static let importNotFound = APIError(status: 404, code: "IMPORT_NOT_FOUND", message: "No import has this id.")

    public static func invalidFeedMessage(_ reason: String) -> APIError {
        APIError(status: 400, code: "INVALID_FEED_MESSAGE", message: "The body is not a GTFS-Realtime FeedMessage: \(reason).")
    }

    public static func outsideServiceArea(_ end: String, meters: Int) -> APIError {
        APIError(
            status: 422, code: "OUTSIDE_SERVICE_AREA", message: "No stop is within \(meters) m of walking of the \(end).",
            details: ["field": .string(end), "max_walking_distance": .number(Double(meters))])
    }

    public static func outsideServiceDates(_ days: ClosedRange<Int32>?) -> APIError {
        APIError(
            status: 422, code: "OUTSIDE_SERVICE_DATES", message: "The timetable has no service on that date.",
            details: [
                "service_start_date": days.map { .string(ServiceDate.iso($0.lowerBound)) } ?? .null,
                "service_end_date": days.map { .string(ServiceDate.iso($0.upperBound)) } ?? .null,
            ])
    }

    public static let noRoute = APIError(
        status: 404, code: "NO_ROUTE_FOUND", message: "No itinerary reaches the destination within the walking distance, changes and time allowed.")

    public static let plannerBusy = APIError(
        status: 503, code: "PLANNER_BUSY", message: "The journey planner has more work than it can take now: try again shortly.",
        headers: ["Retry-After": "2"])

    public static let plannerNotReady = APIError(
        status: 503, code: "PLANNER_NOT_READY", message: "The journey planner is being built for the new timetable.", headers: ["Retry-After": "5"])
}
