import HeraldTransit
import Testing

@testable import HeraldGTFS

/// Which stops an alert reaches, worked out by hand on a small network:
/// station CEN with platforms CEN1 and CEN2; T1 runs CEN1 → TH → WY (direction 0) and back
/// (direction 1); T2 runs CEN2 → NS (direction 0 only); bus B1 runs TH → NS.
@Suite struct AlertReachTests {
    static let files: [String: String] = [
        "agency.txt": "agency_id,agency_name,agency_url,agency_timezone\nA,Agency,https://example.com,Australia/Sydney\n",
        "stops.txt": """
        stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station
        CEN,Central,-33.8839,151.2072,1,
        CEN1,Central Platform 1,-33.8840,151.2070,0,CEN
        CEN2,Central Platform 2,-33.8841,151.2071,0,CEN
        TH,Town Hall,-33.8731,151.2068,0,
        WY,Wynyard,-33.8661,151.2054,0,
        NS,North Sydney,-33.8400,151.2070,0,

        """,
        "routes.txt": "route_id,agency_id,route_short_name,route_long_name,route_type\nT1,A,T1,North Shore,2\nT2,A,T2,Inner West,2\nB1,A,B1,Harbour Bus,3\n",
        "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,1,1,20260101,20261231\n",
        "trips.txt": "route_id,service_id,trip_id,direction_id\nT1,WK,T1a,0\nT1,WK,T1b,1\nT2,WK,T2a,0\nB1,WK,B1a,0\n",
        "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence
        T1a,08:00:00,08:00:00,CEN1,1
        T1a,08:04:00,08:04:00,TH,2
        T1a,08:08:00,08:08:00,WY,3
        T1b,09:00:00,09:00:00,WY,1
        T1b,09:04:00,09:04:00,TH,2
        T1b,09:08:00,09:08:00,CEN1,3
        T2a,08:10:00,08:10:00,CEN2,1
        T2a,08:20:00,08:20:00,NS,2
        B1a,08:30:00,08:30:00,TH,1
        B1a,08:45:00,08:45:00,NS,2

        """,
    ]

    static func timetable() throws -> Timetable {
        let (feed, report) = FeedParser.parse(try TransitTestData.archive(files), scope: .serving)
        guard let feed else { throw TransitTestData.Missing(description: "the network did not parse: \(report.sorted.prefix(3))") }
        return try Timetable(feed: feed)
    }

    typealias E = RealtimeAlert.InformedEntity

    static func reach(_ entities: [E]) throws -> [String: AlertReach.Via] {
        AlertReach(entities: entities, timetable: try timetable()).stops
    }

    @Test func aPlatformReachesItsStationButNotTheOtherPlatform() throws {
        #expect(try Self.reach([E(stopID: "CEN1")]) == ["CEN1": .direct, "CEN": .direct])
        #expect(try Self.reach([E(stopID: "CEN")]) == ["CEN": .direct, "CEN1": .direct, "CEN2": .direct])
    }

    @Test func aRouteReachesEveryStopItServesWithItsStation() throws {
        let t1 = AlertReach.Via.routes(["T1"])
        #expect(try Self.reach([E(routeID: "T1")]) == ["CEN1": t1, "CEN": t1, "TH": t1, "WY": t1])
        // T2 runs in direction 0 only.
        #expect(try Self.reach([E(routeID: "T2", directionID: 1)]) == [:])
        #expect(try Self.reach([E(routeID: "T2", directionID: 0)]) == ["CEN2": .routes(["T2"]), "CEN": .routes(["T2"]), "NS": .routes(["T2"])])
    }

    @Test func aTripReachesItsOwnStopsThroughItsRoute() throws {
        let trip = RealtimeTripDescriptor(tripID: "T2a")
        #expect(try Self.reach([E(trip: trip)]) == ["CEN2": .routes(["T2"]), "CEN": .routes(["T2"]), "NS": .routes(["T2"])])
        #expect(try Self.reach([E(trip: RealtimeTripDescriptor(tripID: "NOPE"))]) == [:])
    }

    @Test func fieldsOfOneSelectorNarrowEachOther() throws {
        #expect(try Self.reach([E(routeID: "T1", stopID: "TH")]) == ["TH": .routes(["T1"])])
        // T2 does not stop at Town Hall.
        #expect(try Self.reach([E(routeID: "T2", stopID: "TH")]) == [:])
        // Buses (route type 3) at North Sydney: B1 only, though T2 stops there too.
        #expect(try Self.reach([E(routeType: 3, stopID: "NS")]) == ["NS": .routes(["B1"])])
    }

    @Test func routeTypeAndAgencyWideAlerts() throws {
        #expect(try Self.reach([E(routeType: 3)]) == ["TH": .routes(["B1"]), "NS": .routes(["B1"])])
        let agency = try Self.reach([E(agencyID: "A")])
        #expect(Set(agency.keys) == ["CEN", "CEN1", "CEN2", "TH", "WY", "NS"])
        #expect(agency["TH"] == .routes(["B1", "T1"]))
        #expect(agency["NS"] == .routes(["B1", "T2"]))
        #expect(try Self.reach([E(agencyID: "OTHER")]) == [:])
    }

    @Test func unknownIdsReachNothingAndTheSelectorsAddUp() throws {
        #expect(try Self.reach([E(routeID: "NOPE"), E(stopID: "NOPE")]) == [:])
        // A stop named directly stays direct when a route also reaches it.
        let both = try Self.reach([E(routeID: "B1"), E(stopID: "TH")])
        #expect(both == ["TH": .direct, "NS": .routes(["B1"])])
        var merged = AlertReach(entities: [E(routeID: "T1")], timetable: try Self.timetable())
        merged.merge(AlertReach(entities: [E(routeID: "B1")], timetable: try Self.timetable()))
        #expect(merged.stops["TH"] == .routes(["B1", "T1"]))
        #expect(merged.routeIDs == ["B1", "T1"])
    }
}

@Suite struct AlertAudienceTests {
    typealias F = AlertAudience.Favorite

    static var reach: AlertReach {
        get throws {
            AlertReach(entities: [.init(routeID: "T1"), .init(routeID: "B1"), .init(stopID: "WY")], timetable: try AlertReachTests.timetable())
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
        let t = try AlertReachTests.timetable()
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
