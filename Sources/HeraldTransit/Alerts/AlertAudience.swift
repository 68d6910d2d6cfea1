import HeraldGTFS

/// Who hears about an alert: the users with a favourite stop the alert reaches, minus those
/// for whom every such favourite is muted (seed 003 §4.7: "skip only if every affected
/// favourite is muted").
///
/// A favourite is muted for an alert when its own switch is off (`notifications_enabled`),
/// when the user muted the stop, or when the alert reaches it only through routes the user
/// muted (MUTE_24H on an earlier alert about them).
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

    /// A user's muted stops and routes, in force now.
    public struct Mutes: Sendable, Equatable {
        public var stops: Set<String> = []
        public var routes: Set<String> = []

        public init(stops: Set<String> = [], routes: Set<String> = []) {
            self.stops = stops
            self.routes = routes
        }
    }

    /// Users to notify, each with the favourite stops the alert reaches (sorted).
    public private(set) var users: [String: [String]] = [:]
    /// Users with a reached favourite who are left out because every one is muted.
    public private(set) var muted: Set<String> = []

    public init(reach: AlertReach, favorites: [Favorite], mutes: [String: Mutes]) {
        var touched: [String: [String]] = [:]
        var silenced: Set<String> = []
        for favorite in favorites {
            guard let via = reach.stops[favorite.stopID] else { continue }
            let userMutes = mutes[favorite.userID]
            let isMuted: Bool
            if !favorite.notificationsEnabled || userMutes?.stops.contains(favorite.stopID) == true {
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
