import HeraldTestFixtures
import Testing

@testable import HeraldGTFS

/// Which stops an alert reaches, worked out by hand on a small network:
/// station CEN with platforms CEN1 and CEN2; T1 runs CEN1 → TH → WY (direction 0) and back
/// (direction 1); T2 runs CEN2 → NS (direction 0 only); bus B1 runs TH → NS.
@Suite struct AlertReachTests {
    /// The network is `GTFSFixtures.alertNetworkFiles` (HeraldTestSupport), which the
    /// transit module's alert tests use too.
    static func timetable() throws -> Timetable { try GTFSFixtures.alertNetwork() }

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
