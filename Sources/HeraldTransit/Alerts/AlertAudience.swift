import HeraldGTFS

/// Who hears about an alert: the users with a favourite the alert reaches, minus those for
/// whom every such favourite is muted (the transit design: "skip only if every affected
/// favourite is muted").
///
/// A favourite stop is reached when the alert names the stop (or its station or platform),
/// or names a route that serves it; a stop favourite narrowed to some routes is reached
/// through those routes only (the alert naming the stop itself still reaches it). A favourite
/// route is reached when the alert reaches any stop through it: route and trip alerts, not
/// an alert about a stop alone.
///
/// A user is left out of an alert they muted (MUTE_24H: this alert and its later versions).
/// A favourite is muted for an alert when its own switch is off (`notifications_enabled`),
/// when the user muted the stop, or when the alert reaches it only through routes the user
/// muted; route and stop mutes do not hold back a critical alert (a cancellation at a
/// favourite still arrives).
public struct AlertAudience: Sendable, Equatable {
    public struct Favorite: Sendable, Equatable {
        public var userID: String
        /// The favourite stop (nil for a route favourite).
        public var stopID: String?
        /// The favourite route (nil for a stop favourite).
        public var routeID: String?
        /// A stop favourite's routes, when narrowed.
        public var routes: [String]?
        public var notificationsEnabled: Bool

        public init(userID: String, stopID: String? = nil, routeID: String? = nil, routes: [String]? = nil, notificationsEnabled: Bool) {
            self.userID = userID
            self.stopID = stopID
            self.routeID = routeID
            self.routes = routes
            self.notificationsEnabled = notificationsEnabled
        }
    }

    /// A user's muted alerts, stops and routes, in force now.
    public struct Mutes: Sendable, Equatable {
        public var alerts: Set<String> = []
        public var stops: Set<String> = []
        public var routes: Set<String> = []

        public init(alerts: Set<String> = [], stops: Set<String> = [], routes: Set<String> = []) {
            self.alerts = alerts
            self.stops = stops
            self.routes = routes
        }
    }

    /// Users to notify, each with the favourites the alert reaches (stop ids, and
    /// `route:{id}` for a route favourite; sorted).
    public private(set) var users: [String: [String]] = [:]
    /// Users with a reached favourite who are left out because every one is muted.
    public private(set) var muted: Set<String> = []

    /// - Parameters:
    ///   - alertID: the alert (users who muted it are left out).
    ///   - critical: a critical alert passes route and stop mutes (not a favourite's own switch).
    public init(reach: AlertReach, favorites: [Favorite], mutes: [String: Mutes], alertID: String = "", critical: Bool = false) {
        var touched: [String: [String]] = [:]
        var silenced: Set<String> = []
        let reachedRoutes = Set(reach.routeIDs)
        for favorite in favorites {
            // What the favourite is called in the answer, and the routes the alert reaches it
            // through (nil: it names the stop itself).
            let name: String
            let through: [String]?
            if let routeID = favorite.routeID {
                guard reachedRoutes.contains(routeID) else { continue }
                name = "route:" + routeID
                through = [routeID]
            } else if let stopID = favorite.stopID, let via = reach.stops[stopID] {
                name = stopID
                switch via {
                case .direct:
                    through = nil
                case .routes(let ids):
                    let kept = favorite.routes.map { narrowed in ids.filter(narrowed.contains) } ?? ids
                    guard !kept.isEmpty else { continue }
                    through = kept
                }
            } else {
                continue
            }
            let userMutes = mutes[favorite.userID]
            let isMuted: Bool
            if !favorite.notificationsEnabled || userMutes?.alerts.contains(alertID) == true {
                isMuted = true
            } else if critical {
                isMuted = false
            } else if let stopID = favorite.stopID, userMutes?.stops.contains(stopID) == true {
                isMuted = true
            } else if let through, let mutedRoutes = userMutes?.routes {
                isMuted = through.allSatisfy(mutedRoutes.contains)
            } else {
                isMuted = false
            }
            if isMuted {
                silenced.insert(favorite.userID)
            } else {
                touched[favorite.userID, default: []].append(name)
            }
        }
        users = touched.mapValues { $0.sorted() }
        muted = silenced.subtracting(touched.keys)
    }
}
