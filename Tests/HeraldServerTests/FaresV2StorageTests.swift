import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import HeraldTransit
import SQLKit
import Testing

@testable import HeraldGTFS

/// GTFS Fares v2 through the real application: an import writes the files' rows, a planned
/// itinerary shows the v2 fare (not the sample feed's fares v1) with the products of each
/// ride, and a restarted node, which rebuilds its timetable and fares from the stored zip,
/// prices it the same.
@Suite struct FaresV2StorageTests {
    /// The sample feed plus Fares v2: $1.75 a ride, changes free within two hours.
    static func sampleWithFaresV2() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fares-v2-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: try TransitFixtures.sampleFeedPath(), toPath: folder)
        let files = [
            "fare_products.txt": "fare_product_id,fare_product_name,amount,currency\nsingle,Single ride,1.75,USD\n",
            "fare_leg_rules.txt": "leg_group_id,fare_product_id\nall,single\n",
            "fare_transfer_rules.txt":
                "from_leg_group_id,to_leg_group_id,transfer_count,duration_limit,duration_limit_type,fare_transfer_type\nall,all,-1,7200,1,0\n",
        ]
        for (name, text) in files {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// AB1 BEATTY_AIRPORT 8:00 → BULLFROG 8:10, BFC1 BULLFROG 8:20 → FUR_CREEK_RES 9:20.
    static func itinerary(_ s: TestSession) async throws -> JSONValue {
        let reply = try await TripPlanRoutesTests.plan(
            s,
            [
                "origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "FUR_CREEK_RES"], "depart_at": "2007-06-05T07:50:00-07:00",
                "max_itineraries": 1,
            ])
        #expect(reply.status == 200)
        return try #require(reply.data?["itineraries"]?[0])
    }

    static func expectFaresV2(_ itinerary: JSONValue) throws {
        #expect(itinerary["transfers"] == 1)
        // Two rides, the change free: one $1.75 (fares v1 would say $2.50).
        #expect(itinerary["fare_cents"] == 175 && itinerary["fare_currency"] == "USD")
        let rides = try #require(itinerary["legs"]?.arrayValue).filter { $0["mode"]?.stringValue != "WALK" }
        try #require(rides.count == 2)
        #expect(rides[0]["fare_products"]?[0]?["fare_product_id"] == "single")
        #expect(rides[0]["fare_products"]?[0]?["fare_product_name"] == "Single ride")
        #expect(rides[0]["fare_products"]?[0]?["amount_cents"] == 175)
        #expect(rides[0]["fare_products"]?[0]?["transfer"] == false)
        #expect(rides[1]["fare_products"] == .array([]))
    }

    @Test(arguments: TestEngine.allCases)
    func anImportStoresTheRowsAndARestartedNodePricesAlike(engine: TestEngine) async throws {
        let config = try await TestServer.config(engine)
        let folder = try Self.sampleWithFaresV2()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning)) { s in
            let outcome = try await s.runtime.transit.service.feeds.importFeed("default", source: .path(folder), requestedBy: "test")
            #expect(outcome.record.status == .succeeded)
            let versionID = try #require(outcome.version?.id)
            let counts = try await s.runtime.database.withConnection { db in
                (
                    try await db.raw("SELECT COUNT(*) AS n FROM transit_fare_products WHERE version_id = \(bind: versionID) AND amount = 1.75")
                        .first()!.decode(column: "n", as: Int.self),
                    try await db.raw(
                        "SELECT COUNT(*) AS n FROM transit_fare_leg_rules WHERE version_id = \(bind: versionID) AND leg_group_id = 'all' AND rule_priority IS NULL"
                    ).first()!.decode(column: "n", as: Int.self),
                    try await db.raw(
                        "SELECT COUNT(*) AS n FROM transit_fare_transfer_rules WHERE version_id = \(bind: versionID) AND transfer_count = -1 AND duration_limit = 7200"
                    ).first()!.decode(column: "n", as: Int.self)
                )
            }
            #expect(counts.0 == 1)
            #expect(counts.1 == 1)
            #expect(counts.2 == 1)
            try Self.expectFaresV2(try await Self.itinerary(s))
        }
        // The restarted node loads the stored version: the same fare.
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning)) { s in
            try Self.expectFaresV2(try await Self.itinerary(s))
        }
    }
}
