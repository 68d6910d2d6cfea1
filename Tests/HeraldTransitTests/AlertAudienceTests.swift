import HeraldTestSupport
import HeraldTransit
import Testing

@testable import HeraldGTFS

/// Who hears of an alert, on the alert network of `GTFSFixtures` (HeraldTestSupport):
/// station CEN with platforms CEN1 and CEN2; T1 runs CEN1 → TH → WY (direction 0) and back
/// (direction 1); T2 runs CEN2 → NS (direction 0 only); bus B1 runs TH → NS.
@Suite struct AlertAudienceTests {
    typealias F = AlertAudience.Favorite

    static var reach: AlertReach {
        get throws {
            AlertReach(entities: [.init(routeID: "T1"), .init(routeID: "B1"), .init(stopID: "WY")], timetable: try GTFSFixtures.alertNetwork())
        }
    }

    @Test func usersAreSkippedOnlyWhenEveryTouchedFavouriteIsMuted() throws {
        let favorites = [
            F(userID: "ann", stopID: "TH", notificationsEnabled: true),  // via B1 and T1
            F(userID: "bob", stopID: "TH", notificationsEnabled: true),
            F(userID: "cat", stopID: "CEN1", notificationsEnabled: false),  // switched off
            F(userID: "dan", stopID: "CEN1", notificationsEnabled: false),
            F(userID: "dan", stopID: "WY", notificationsEnabled: true),  // named directly
            F(userID: "eve", stopID: "NS", notificationsEnabled: true),  // via B1
            F(userID: "fay", stopID: "CEN2", notificationsEnabled: true),  // not reached
            F(userID: "gus", stopID: "WY", notificationsEnabled: true),
        ]
        let mutes: [String: AlertAudience.Mutes] = [
            "ann": .init(routes: ["T1"]),  // B1 still reaches Town Hall
            "bob": .init(routes: ["T1", "B1"]),  // every route muted
            "eve": .init(routes: ["B1"]),
            "gus": .init(routes: ["T1"], stops: []),  // Wynyard is named directly: a route mute does not cover it
        ]
        let audience = AlertAudience(reach: try Self.reach, favorites: favorites, mutes: mutes)
        #expect(audience.users == ["ann": ["TH"], "dan": ["WY"], "gus": ["WY"]])
        #expect(audience.muted == ["bob", "cat", "eve"])
        let stopMuted = AlertAudience(
            reach: try Self.reach, favorites: [F(userID: "gus", stopID: "WY", notificationsEnabled: true)], mutes: ["gus": .init(stops: ["WY"])])
        #expect(stopMuted.users.isEmpty && stopMuted.muted == ["gus"])
    }

    /// MUTE_24H mutes the alert it came with; route and stop mutes let a critical alert
    /// through, a favourite's own switch does not.
    @Test func anAlertMuteHoldsOnlyThatAlertAndCriticalAlertsPassRouteAndStopMutes() throws {
        let favorites = [
            F(userID: "ann", stopID: "TH", notificationsEnabled: true), F(userID: "bob", stopID: "TH", notificationsEnabled: true),
            F(userID: "cat", stopID: "WY", notificationsEnabled: true), F(userID: "dan", stopID: "WY", notificationsEnabled: false),
        ]
        let mutes: [String: AlertAudience.Mutes] = [
            "ann": .init(alerts: ["delay-1"]), "bob": .init(routes: ["T1", "B1"]), "cat": .init(stops: ["WY"]),
        ]
        let delay = AlertAudience(reach: try Self.reach, favorites: favorites, mutes: mutes, alertID: "delay-1")
        #expect(delay.users.isEmpty && delay.muted == ["ann", "bob", "cat", "dan"])
        let another = AlertAudience(reach: try Self.reach, favorites: favorites, mutes: mutes, alertID: "delay-2")
        #expect(another.users == ["ann": ["TH"]])
        let cancellation = AlertAudience(reach: try Self.reach, favorites: favorites, mutes: mutes, alertID: "cancel-1", critical: true)
        #expect(cancellation.users == ["ann": ["TH"], "bob": ["TH"], "cat": ["WY"]] && cancellation.muted == ["dan"])
    }

    /// A stop narrowed to some routes hears only of those (and of the stop itself); a
    /// favourite route hears of its route and trip alerts, not of a stop's alone.
    @Test func narrowedStopsAndFavouriteRoutes() throws {
        let t = try GTFSFixtures.alertNetwork()
        let t1 = AlertReach(entities: [.init(routeID: "T1")], timetable: t)
        let tripOfB1 = AlertReach(entities: [.init(trip: RealtimeTripDescriptor(tripID: "B1a"))], timetable: t)
        let lift = AlertReach(entities: [.init(stopID: "TH")], timetable: t)
        let favorites = [
            F(userID: "ann", stopID: "TH", routes: ["B1"], notificationsEnabled: true),  // Town Hall, for the bus only
            F(userID: "bob", stopID: "TH", routes: ["T1", "B1"], notificationsEnabled: true),
            F(userID: "cat", routeID: "T1", notificationsEnabled: true),
            F(userID: "dan", routeID: "B1", notificationsEnabled: true),
            F(userID: "eve", routeID: "B1", notificationsEnabled: false),
        ]
        #expect(AlertAudience(reach: t1, favorites: favorites, mutes: [:]).users == ["bob": ["TH"], "cat": ["route:T1"]])
        let bus = AlertAudience(reach: tripOfB1, favorites: favorites, mutes: [:])
        #expect(bus.users == ["ann": ["TH"], "bob": ["TH"], "dan": ["route:B1"]] && bus.muted == ["eve"])
        #expect(AlertAudience(reach: lift, favorites: favorites, mutes: [:]).users == ["ann": ["TH"], "bob": ["TH"]])
        // A muted route holds back its favourite route's non-critical alerts only.
        let mutes: [String: AlertAudience.Mutes] = ["cat": .init(routes: ["T1"])]
        #expect(AlertAudience(reach: t1, favorites: favorites, mutes: mutes).muted == ["cat"])
        #expect(AlertAudience(reach: t1, favorites: favorites, mutes: mutes, critical: true).users["cat"] == ["route:T1"])
    }
}

extension AlertAudience.Mutes {
    init(routes: Set<String>, stops: Set<String>) { self.init(stops: stops, routes: routes) }
}
