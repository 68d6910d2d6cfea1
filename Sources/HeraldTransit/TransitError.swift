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
        APIError(status: 409, code: "FAVORITES_LIMIT_REACHED", message: "You have \(limit) favourites, the most there can be.", details: ["limit": .number(Double(limit))])
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
}
