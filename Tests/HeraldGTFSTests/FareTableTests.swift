import Foundation
import Testing

@testable import HeraldGTFS

/// Fares v1 over small written feeds: by route, by zones, transfers and their duration, and
/// the cheapest cover of an itinerary's rides.
@Suite struct FareTableTests {
    static func table(_ attributes: String, _ rules: String) throws -> FareTable {
        var files = JourneyPlannerTests.smallFeed
        files["fare_attributes.txt"] = "fare_id,price,currency_type,payment_method,transfers,transfer_duration\n" + attributes
        files["fare_rules.txt"] = "fare_id,route_id,origin_id,destination_id,contains_id\n" + rules
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(files), scope: .serving)
        return FareTable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
    }

    static func ride(_ route: String, at minute: Int64) -> FareTable.Ride {
        FareTable.Ride(routeID: route, originZone: nil, destinationZone: nil, zones: [], departure: minute * 60)
    }

    @Test func routesTransfersAndTheCheapestCover() throws {
        // single: $2 one ride; day: $5, unlimited transfers (empty) within 90 minutes, R1 and R2 only.
        let fares = try Self.table("single,2.00,EUR,0,0,\nday,5.00,EUR,0,,5400\n", "single,R1,,,\nsingle,R2,,,\nsingle,R3,,,\nday,R1,,,\nday,R2,,,\n")
        #expect(fares.fare([Self.ride("R1", at: 0)])?.minor == 200)
        #expect(fares.fare([Self.ride("R1", at: 0), Self.ride("R2", at: 10)])?.minor == 400)
        // Three rides: the day fare (5) beats three singles (6) when all are within 90 minutes…
        #expect(fares.fare([Self.ride("R1", at: 0), Self.ride("R2", at: 10), Self.ride("R1", at: 80)])?.minor == 500)
        // …and not past them: 100 minutes apart, singles again.
        #expect(fares.fare([Self.ride("R1", at: 0), Self.ride("R2", at: 10), Self.ride("R1", at: 100)])?.minor == 600)
        // R3 is not in the day fare: day for the first two would be 5, singles 2 + 2: 4, then 2.
        #expect(fares.fare([Self.ride("R1", at: 0), Self.ride("R2", at: 10), Self.ride("R3", at: 20)])?.minor == 600)
        #expect(fares.fare([Self.ride("R1", at: 0)])?.currency == "EUR")
        // A route no fare covers: no fare at all, not a wrong one.
        #expect(fares.fare([Self.ride("R4", at: 0)]) == nil)
    }

    @Test func zonesAndAFeedWithoutFares() throws {
        var files = JourneyPlannerTests.smallFeed
        files["stops.txt"] = """
            stop_id,stop_name,stop_lat,stop_lon,zone_id
            A,A,52.5000,13.4000,1
            B,B,52.5100,13.4000,1
            C,C,52.5118,13.4000,2
            D,D,52.5300,13.4000,2

            """
        files["fare_attributes.txt"] = "fare_id,price,currency_type,payment_method,transfers\ninner,1.50,EUR,0,\ncross,3.00,EUR,0,\n"
        files["fare_rules.txt"] = "fare_id,route_id,origin_id,destination_id,contains_id\ninner,,1,1,\ninner,,2,2,\ncross,,1,2,\ncross,,2,1,\n"
        let (feed, report) = FeedParser.parse(try GTFSTestData.archive(files), scope: .serving)
        let fares = FareTable(feed: try #require(feed, "\(report.sorted.prefix(3))"))
        let inner = FareTable.Ride(routeID: "R1", originZone: "1", destinationZone: "1", zones: ["1"], departure: 0)
        let across = FareTable.Ride(routeID: "R3", originZone: "1", destinationZone: "2", zones: ["1", "2"], departure: 0)
        #expect(fares.fare([inner])?.minor == 150)
        #expect(fares.fare([across])?.minor == 300)
        #expect(FareTable().fare([inner]) == nil)
        let (plain, _) = FeedParser.parse(try GTFSTestData.archive(JourneyPlannerTests.smallFeed), scope: .serving)
        #expect(FareTable(feed: try #require(plain)).isEmpty)
    }
}
