import HeraldGTFS

/// Who hears about an alert: the users with a favourite stop the alert reaches, minus those
/// for whom every such favourite is muted (seed 003 §4.7: "skip only if every affected
/// favourite is muted").
///
/// A user is left out of an alert they muted (MUTE_24H: this alert and its later versions).
/// A favourite is muted for an alert when its own switch is off (`notifications_enabled`),
/// when the user muted the stop, or when the alert reaches it only through routes the user
/// muted; route and stop mutes do not hold back a critical alert (a cancellation at a
/// favourite still arrives).
public struct AlertAudience: Sendable, Equatable {
    public struct Favorite: Sendable, Equatable {
        public var userID: String
        public var stopID: String
        public var notificationsEnabled: Bool

        public init(userID: String, stopID: String, notificationsEnabled: Bool) {
            self.userID = userID
            self.stopID = stopID
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

    /// Users to notify, each with the favourite stops the alert reaches (sorted).
    public private(set) var users: [String: [String]] = [:]
    /// Users with a reached favourite who are left out because every one is muted.
    public private(set) var muted: Set<String> = []

    /// - Parameters:
    ///   - alertID: the alert (users who muted it are left out).
    ///   - critical: a critical alert passes route and stop mutes (not a favourite's own switch).
    public init(reach: AlertReach, favorites: [Favorite], mutes: [String: Mutes], alertID: String = "", critical: Bool = false) {
        var touched: [String: [String]] = [:]
        var silenced: Set<String> = []
        for favorite in favorites {
            guard let via = reach.stops[favorite.stopID] else { continue }
            let userMutes = mutes[favorite.userID]
            let isMuted: Bool
            if !favorite.notificationsEnabled || userMutes?.alerts.contains(alertID) == true {
                isMuted = true
            } else if critical {
                isMuted = false
            } else if userMutes?.stops.contains(favorite.stopID) == true {
                isMuted = true
            } else if case .routes(let routes) = via, let mutedRoutes = userMutes?.routes {
                isMuted = routes.allSatisfy(mutedRoutes.contains)
            } else {
                isMuted = false
            }
            if isMuted {
                silenced.insert(favorite.userID)
            } else {
                touched[favorite.userID, default: []].append(favorite.stopID)
            }
        }
        users = touched.mapValues { $0.sorted() }
        muted = silenced.subtracting(touched.keys)
    }
}
