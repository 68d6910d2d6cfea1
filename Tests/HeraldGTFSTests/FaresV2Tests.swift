import Foundation
import Testing

@testable import HeraldGTFS

/// GTFS Fares v2 over small written feeds: leg rules by network, by area (a station's area
/// holding for its platform) and by timeframe, with and without `rule_priority`; transfer
/// rules of each `fare_transfer_type`, `transfer_count` and `duration_limit`; joined legs;
/// the default rider's cheapest media; what the parser keeps and refuses.
@Suite struct FaresV2Tests {
    /// Networks n1 (R1), n2 (R2), n3 (R3); zone z1 (A, B), zone z2 (C, D, and station ST,
    /// so its platform P1).
    static let base: [String: String] = [
        "stops.txt": """
        stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station
        A,A,52.5000,13.4000,0,
        B,B,52.5100,13.4000,0,
        C,C,52.5118,13.4000,0,
        D,D,52.5300,13.4000,0,
        ST,Station,52.5400,13.4000,1,
        P1,Platform 1,52.5401,13.4000,0,ST

        """,
        "networks.txt": "network_id,network_name\nn1,Bus\nn2,Tram\nn3,Rail\n",
        "route_networks.txt": "network_id,route_id\nn1,R1\nn2,R2\nn3,R3\n",
        "areas.txt": "area_id,area_name\nz1,Zone 1\nz2,Zone 2\n",
        "stop_areas.txt": "area_id,stop_id\nz1,A\nz1,B\nz2,C\nz2,D\nz2,ST\n",
    ]

    static func parse(_ files: [String: String], scope: FeedParser.Scope = .full) throws -> (TransitFeed?, FeedReport) {
        var all = JourneyPlannerTests.smallFeed
        for (name, text) in base { all[name] = text }
        for (name, text) in files { all[name] = text }
        return FeedParser.parse(try GTFSTestData.archive(all), scope: scope)
    }

    static func fares(_ files: [String: String]) throws -> (fares: FaresV2, timetable: Timetable) {
        let (feed, report) = try parse(files)
        let timetable = try Timetable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
        return (FaresV2(timetable: timetable), timetable)
    }

    /// Monday 2025-03-10, when service S runs.
    static let monday: Int32 = ServiceDate.days(year: 2025, month: 3, day: 10)!

    /// A ride on `route` leaving `from` at `minute` minutes past local midnight, arriving at
    /// `to` `duration` minutes later.
    static func leg(_ t: Timetable, _ route: String, _ from: String, _ to: String, at minute: Int, for duration: Int = 10, day: Int32? = nil) -> FareLeg {
        let departure = t.zone.instant(localSeconds: Int64(day ?? monday) * 86_400 + Int64(minute) * 60)
        return FareLeg(routeID: route, boarding: [from], alighting: [to], departure: departure, arrival: departure + Int64(duration) * 60)
    }

    static func products(_ rows: String) -> String {
        "fare_product_id,fare_product_name,amount,currency\n" + rows
    }

    @Test func aLegRuleByNetworkAndTheEmptyNetwork() throws {
        // Without rule_priority an empty network_id means every network no rule names.
        let (fares, t) = try Self.fares([
            "fare_products.txt": Self.products("bus,Bus,2.00,EUR\nother,Other,5.00,EUR\n"),
            "fare_leg_rules.txt": "leg_group_id,network_id,fare_product_id\n,n1,bus\n,,other\n",
        ])
        #expect(!fares.isEmpty)
        let bus = try #require(fares.quote([Self.leg(t, "R1", "A", "B", at: 600)]))
        #expect(bus.minor == 200 && bus.currency == "EUR")
        #expect(
            bus.charges == [FareQuote.Charge(productID: "bus", productName: "Bus", minor: 200, currency: "EUR", fareMediaID: nil, leg: 0, isTransfer: false)])
        // n1 is named: its legs never take the empty rule's product.
        #expect(fares.quote([Self.leg(t, "R3", "A", "B", at: 600)])?.minor == 500)
        #expect(fares.quote([Self.leg(t, "R2", "A", "B", at: 600)])?.charges.map(\.productID) == ["other"])
        // No transfer rules: each leg pays.
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 600), Self.leg(t, "R3", "B", "D", at: 620)])?.minor == 700)
        #expect(fares.quote([]) == nil)
    }

    @Test func legRulesByDepartureAndArrivalArea() throws {
        let (fares, t) = try Self.fares([
            "fare_products.txt": Self.products("inner,Inner,1.50,EUR\ncross,Cross,3.00,EUR\nto_two,To zone 2,2.50,EUR\n"),
            "fare_leg_rules.txt": "from_area_id,to_area_id,fare_product_id\nz1,z1,inner\nz1,z2,cross\n,z2,to_two\n",
        ])
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 600)])?.minor == 150)
        #expect(fares.quote([Self.leg(t, "R1", "A", "D", at: 600)])?.minor == 300)
        // From z2 (named by no rule's from_area_id): the empty from_area_id matches.
        #expect(fares.quote([Self.leg(t, "R3", "C", "D", at: 600)])?.minor == 250)
        // To z1 from z2: no rule.
        #expect(fares.quote([Self.leg(t, "R3", "D", "A", at: 600)]) == nil)
        // Platform P1 is in no area: its station ST's (z2) holds.
        let departure = t.zone.instant(localSeconds: Int64(Self.monday) * 86_400 + 600 * 60)
        let fromPlatform = FareLeg(routeID: "R3", boarding: ["P1", "ST"], alighting: ["D"], departure: departure, arrival: departure + 600)
        #expect(fares.quote([fromPlatform])?.charges.map(\.productID) == ["to_two"])
    }

    @Test func rulePriorityPicksTheHighestMatch() throws {
        // With rule_priority, empty fields match anything; the highest priority wins.
        let (fares, t) = try Self.fares([
            "fare_products.txt": Self.products("flat,Flat,2.00,EUR\nbus,Bus,1.50,EUR\ncross,Cross,3.00,EUR\n"),
            "fare_leg_rules.txt": "network_id,from_area_id,to_area_id,fare_product_id,rule_priority\n,,,flat,\nn1,,,bus,1\n,z1,z2,cross,2\n",
        ])
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 600)])?.minor == 150)
        #expect(fares.quote([Self.leg(t, "R3", "A", "B", at: 600)])?.minor == 200)
        #expect(fares.quote([Self.leg(t, "R1", "A", "D", at: 600)])?.minor == 300)
        #expect(fares.quote([Self.leg(t, "R3", "C", "D", at: 600)])?.minor == 200)
    }

    @Test func timeframesByLocalTimeAndServiceDay() throws {
        let (fares, t) = try Self.fares([
            "timeframes.txt":
                "timeframe_group_id,start_time,end_time,service_id\npeak,07:00:00,09:00:00,S\noffpeak,00:00:00,07:00:00,S\noffpeak,09:00:00,24:00:00,S\n",
            "fare_products.txt": Self.products("peak,Peak,3.00,EUR\noffpeak,Off-peak,2.00,EUR\n"),
            "fare_leg_rules.txt": "network_id,from_timeframe_group_id,fare_product_id\nn1,peak,peak\nn1,offpeak,offpeak\n",
        ])
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 8 * 60)])?.minor == 300)
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 10 * 60)])?.minor == 200)
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 7 * 60 - 1)])?.minor == 200)
        // The start is in the timeframe, the end is not.
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 7 * 60)])?.minor == 300)
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 9 * 60)])?.minor == 200)
        // A date service S does not run on: no timeframe holds, no fare.
        let later = ServiceDate.days(year: 2026, month: 1, day: 5)!
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 8 * 60, day: later)]) == nil)
        // n3 has no rule.
        #expect(fares.quote([Self.leg(t, "R3", "A", "B", at: 8 * 60)]) == nil)
    }

    /// Leg groups g1 (n1, $2.00), g2 (n2, $2.50), g3 (n3, $3.00).
    static let groupRules = "leg_group_id,network_id,fare_product_id\ng1,n1,p1\ng2,n2,p2\ng3,n3,p3\n"
    static let groupProducts = "p1,One,2.00,EUR\np2,Two,2.50,EUR\np3,Three,3.00,EUR\n"

    @Test func transferTypesZeroOneAndTwo() throws {
        let (fares, t) = try Self.fares([
            "fare_products.txt": Self.products(Self.groupProducts + "half,Half,0.50,EUR\ndiscount,Discount,-1.00,EUR\ncombo,Combo,4.00,EUR\n"),
            "fare_leg_rules.txt": Self.groupRules,
            "fare_transfer_rules.txt": "from_leg_group_id,to_leg_group_id,fare_transfer_type,fare_product_id\ng1,g2,0,half\ng2,g3,1,discount\ng1,g3,2,combo\n",
        ])
        let r1 = Self.leg(t, "R1", "A", "B", at: 600)
        let r2 = Self.leg(t, "R2", "B", "C", at: 620)
        let r3 = Self.leg(t, "R3", "C", "D", at: 640)
        // 0: A + AB.
        let zero = try #require(fares.quote([r1, r2]))
        #expect(zero.minor == 250)
        #expect(zero.charges.map(\.productID) == ["p1", "half"] && zero.charges.map(\.leg) == [0, 1] && zero.charges.map(\.isTransfer) == [false, true])
        // 1: A + AB + B (AB a discount).
        #expect(fares.quote([Self.leg(t, "R2", "A", "B", at: 600), Self.leg(t, "R3", "B", "C", at: 620)])?.minor == 250 - 100 + 300)
        // 2: AB alone.
        let two = try #require(fares.quote([r1, Self.leg(t, "R3", "B", "C", at: 620)]))
        #expect(two.minor == 400 && two.charges.map(\.productID) == ["combo"])
        // No rule from g3: separate legs.
        #expect(fares.quote([Self.leg(t, "R3", "A", "B", at: 600), Self.leg(t, "R1", "B", "C", at: 620)])?.minor == 500)
        // Two changes: A + AB (type 0), then + BC + C (type 1): S + BC + C.
        #expect(fares.quote([r1, r2, r3])?.minor == 200 + 50 - 100 + 300)
    }

    @Test func transferCountLimitsTheChangesOneRuleCovers() throws {
        let rides = { (t: Timetable, count: Int) in (0..<count).map { Self.leg(t, "R1", "A", "B", at: 600 + 20 * $0) } }
        // One free transfer: the third ride pays, and the fourth transfers free from it.
        let (once, t) = try Self.fares([
            "fare_products.txt": Self.products(Self.groupProducts),
            "fare_leg_rules.txt": Self.groupRules,
            "fare_transfer_rules.txt": "from_leg_group_id,to_leg_group_id,transfer_count,fare_transfer_type\ng1,g1,1,0\n",
        ])
        #expect(once.quote(rides(t, 2))?.minor == 200)
        #expect(once.quote(rides(t, 3))?.minor == 400)
        #expect(once.quote(rides(t, 4))?.minor == 400)
        // Unlimited (-1).
        let (unlimited, u) = try Self.fares([
            "fare_products.txt": Self.products(Self.groupProducts),
            "fare_leg_rules.txt": Self.groupRules,
            "fare_transfer_rules.txt": "from_leg_group_id,to_leg_group_id,transfer_count,fare_transfer_type\ng1,g1,-1,0\n",
        ])
        #expect(unlimited.quote(rides(u, 4))?.minor == 200)
        // Of two rules, the smallest transfer_count that covers the transfers so far: the first
        // change costs 0.50 (count 1), the second is free (count 3).
        let (both, b) = try Self.fares([
            "fare_products.txt": Self.products(Self.groupProducts + "half,Half,0.50,EUR\n"),
            "fare_leg_rules.txt": Self.groupRules,
            "fare_transfer_rules.txt": "from_leg_group_id,to_leg_group_id,transfer_count,fare_transfer_type,fare_product_id\ng1,g1,1,0,half\ng1,g1,3,0,\n",
        ])
        #expect(both.quote(rides(b, 3))?.minor == 250)
    }

    @Test func durationLimitsFromTheFirstLegOfTheSubJourney() throws {
        func rules(_ type: Int) -> [String: String] {
            [
                "fare_products.txt": Self.products(Self.groupProducts),
                "fare_leg_rules.txt": Self.groupRules,
                "fare_transfer_rules.txt":
                    "from_leg_group_id,to_leg_group_id,transfer_count,duration_limit,duration_limit_type,fare_transfer_type\ng1,g1,-1,5400,\(type),0\n",
            ]
        }
        // 90 minutes from the first departure to the last departure (type 1).
        let (departures, t) = try Self.fares(rules(1))
        let at = { (minutes: [Int]) in minutes.map { Self.leg(t, "R1", "A", "B", at: 600 + $0) } }
        #expect(departures.quote(at([0, 30, 60, 80]))?.minor == 200)
        #expect(departures.quote(at([0, 100]))?.minor == 400)
        // Measured from the sub-journey's first leg, not the previous one.
        #expect(departures.quote(at([0, 60, 100]))?.minor == 400)
        // Type 0 (first departure to last arrival): 0 → 80 + 20 minutes on board is 100 > 90.
        let (arrivals, u) = try Self.fares(rules(0))
        let long = [Self.leg(u, "R1", "A", "B", at: 600), Self.leg(u, "R1", "A", "B", at: 680, for: 20)]
        #expect(arrivals.quote(long)?.minor == 400)
        #expect(departures.quote([Self.leg(t, "R1", "A", "B", at: 600), Self.leg(t, "R1", "A", "B", at: 680, for: 20)])?.minor == 200)
    }

    @Test func joinedLegsAreMatchedAsOne() throws {
        let (fares, t) = try Self.fares([
            "route_networks.txt": "network_id,route_id\nn1,R1\nn1,R2\nn3,R3\n",
            "fare_leg_join_rules.txt": "from_network_id,to_network_id\nn1,n1\n",
            "fare_products.txt": Self.products("inner,Inner,1.50,EUR\ncross,Cross,3.00,EUR\ninner2,Inner 2,2.00,EUR\n"),
            "fare_leg_rules.txt": "from_area_id,to_area_id,fare_product_id\nz1,z1,inner\nz1,z2,cross\nz2,z2,inner2\n",
        ])
        // A → B, change at B, B → D: one leg A (z1) → D (z2).
        let joined = try #require(fares.quote([Self.leg(t, "R1", "A", "B", at: 600), Self.leg(t, "R2", "B", "D", at: 620)]))
        #expect(joined.minor == 300 && joined.charges.map(\.leg) == [0])
        // Changing between B and C (not one stop or station): two legs.
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 600), Self.leg(t, "R2", "C", "D", at: 620)])?.minor == 350)
        // n1 to n3 has no join rule.
        #expect(fares.quote([Self.leg(t, "R1", "A", "B", at: 600), Self.leg(t, "R3", "B", "D", at: 620)])?.minor == 450)
    }

    @Test func theDefaultRiderAndTheCheapestMedia() throws {
        let (fares, t) = try Self.fares([
            "rider_categories.txt": "rider_category_id,rider_category_name,is_default_fare_category\nadult,Adult,1\nsenior,Senior,0\n",
            "fare_media.txt": "fare_media_id,fare_media_name,fare_media_type\ncash,Cash,0\ncard,Card,2\n",
            "fare_products.txt": """
            fare_product_id,fare_product_name,rider_category_id,fare_media_id,amount,currency
            single,Single,adult,cash,2.50,EUR
            single,Single,adult,card,2.00,EUR
            single,Single,senior,card,1.00,EUR

            """,
            "fare_leg_rules.txt": "fare_product_id\nsingle\n",
        ])
        let quote = try #require(fares.quote([Self.leg(t, "R1", "A", "B", at: 600)]))
        #expect(quote.minor == 200 && quote.charges.first?.fareMediaID == "card")
    }

    @Test func whatTheParserKeepsAndRefuses() throws {
        let products = Self.products(Self.groupProducts)
        // Distance-based rules (a proposal) are left out and reported, not an error.
        let (distance, report) = try Self.parse([
            "fare_products.txt": products,
            "fare_leg_rules.txt": "network_id,fare_product_id,min_distance_units,max_distance_units\nn1,p1,,\nn1,p2,0,10\n",
        ])
        #expect(distance?.fareLegRules.count == 1)
        #expect(report.count("unsupported_distance_based_fare_leg_rule") == 1)
        #expect(distance?.fareLegRules.first?.priority == nil)
        // Read in the serving scope too (a node rebuilds its fares from the stored zip).
        let (served, _) = try Self.parse(
            ["fare_products.txt": products, "fare_leg_rules.txt": Self.groupRules, "timeframes.txt": "timeframe_group_id,service_id\nall,S\n"], scope: .serving)
        #expect(served?.fareLegRules.count == 3 && served?.networks.count == 3 && served?.routeNetworks.count == 3 && served?.stopAreas.count == 5)
        #expect(served?.timeframes == [Timeframe(groupID: "all", start: 0, end: 86_400, service: 0)])
        // References to nothing refuse the feed, as elsewhere.
        let (unknown, unknownReport) = try Self.parse(["fare_products.txt": products, "fare_leg_rules.txt": "network_id,fare_product_id\nnope,p1\n"])
        #expect(unknown == nil && unknownReport.count("foreign_key_violation") == 1)
        let (_, countReport) = try Self.parse([
            "fare_products.txt": products, "fare_leg_rules.txt": Self.groupRules,
            "fare_transfer_rules.txt": "from_leg_group_id,to_leg_group_id,transfer_count,fare_transfer_type\ng1,g2,1,0\ng1,g1,,0\n",
        ])
        #expect(countReport.count("fare_transfer_rule_with_forbidden_transfer_count") == 1)
        #expect(countReport.count("fare_transfer_rule_missing_transfer_count") == 1)
        let (_, timeReport) = try Self.parse([
            "timeframes.txt": "timeframe_group_id,start_time,end_time,service_id\nlate,23:00:00,25:00:00,S\nhalf,08:00:00,,S\n"
        ])
        #expect(timeReport.count("timeframe_start_or_end_time_greater_than_twenty_four_hours") == 1)
        #expect(timeReport.count("timeframe_only_start_or_end_time_specified") == 1)
    }

    @Test func aFeedWithoutFaresV2() throws {
        let (feed, _) = FeedParser.parse(try GTFSTestData.archive(JourneyPlannerTests.smallFeed), scope: .serving)
        let timetable = try Timetable(feed: try #require(feed))
        let fares = FaresV2(timetable: timetable)
        #expect(fares.isEmpty)
        #expect(fares.quote([Self.leg(timetable, "R1", "A", "B", at: 600)]) == nil)
    }
}
