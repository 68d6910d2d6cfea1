import Foundation
import HeraldClient
import HeraldCore
import HeraldTestSupport
import Testing

/// The client's Live Activity calls against the real server, and its Codable types reading
/// the content state the server computed for a real trip.
@Suite struct LiveActivityClientTests {
    @Test func registersTokensAndReadsTheServersContentStateAsItsTypes() async throws {
        try await HeraldClientTests.withServer { url, s in
            let rider = try await s.token("rita")
            let client = HeraldClient(baseURL: url, tokenProvider: HeraldClientTests.Tokens([rider]))
            try await client.registerPushToStartToken(Data(repeating: 0xA5, count: 40), kind: .trip)
            let listed = try await s.request(.get, "/api/v1/live-activities/start-tokens", token: rider)
            #expect(listed.data?["start_tokens"]?[0]?["kind"] == "trip")

            // A trip: an approved driver with a car accepts the rider's request.
            let driver = try await s.token("dave", .driver)
            let ops = try await s.token("ops", .operator)
            #expect(try await s.request(.put, "/api/v1/drivers/me", token: driver, json: ["name": "Dave Jones", "truck_type": "sedan"]).status == 201)
            #expect(try await s.request(.post, "/api/v1/operators/drivers/dave/approval", token: ops, json: ["status": "approved"]).status == 200)
            #expect(try await s.request(.post, "/api/v1/drivers/online", token: driver, json: ["online": true]).status == 200)
            let car: JSONValue = ["make": "Kia", "model": "Niro", "color": "Blue", "license_plate": "XYZ9", "capacity": 4, "ride_types": ["STANDARD"]]
            #expect(try await s.request(.put, "/api/v1/drivers/me/vehicle", token: driver, json: car).status == 200)
            #expect(
                try await s.request(
                    .post, "/api/v1/drivers/location", token: driver, json: ["latitude": 37.7759, "longitude": -122.4194, "accuracy_meters": 5]
                ).status == 200)
            let place: (Double, Double) -> JSONValue = { lat, lon in ["latitude": .number(lat), "longitude": .number(lon)] }
            let booked = try await s.request(
                .post, "/api/v1/ride-requests", token: rider, headers: [.init("Idempotency-Key")!: "k1"],
                json: ["pickup": place(37.7749, -122.4194), "dropoff": place(37.8044, -122.2712), "ride_type": "STANDARD", "passenger_count": 1])
            let requestID = try #require(booked.data?["request_id"]?.stringValue)
            let accepted = try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: driver)
            let tripID = try #require(accepted.data?["trip_id"]?.stringValue)

            let registration = try await client.registerLiveActivity(
                activityID: "7F0C2C1E-ACTIVITY", kind: .trip, subjectID: tripID, pushToken: Data(repeating: 0x3C, count: 40))
            #expect(registration.status == "active" && registration.subjectID == tripID && registration.activityID == "7F0C2C1E-ACTIVITY")
            // The server's JSON is the app's ContentState.
            let state = try registration.contentState.decode(TripActivityAttributes.ContentState.self, decoder: JSONDecoder())
            #expect(state.tripID == tripID && state.state == "ACCEPTED" && state.driverName == "Dave" && state.vehicle == "Blue Kia Niro")
            #expect(state.licensePlate == "XYZ9" && state.etaMinutes == nil && !state.isFinal)
            // Round trip through the keys ActivityKit's decoder sees.
            let encoded = try JSONEncoder().encode(state)
            let keys = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any]).keys.sorted()
            #expect(keys == ["driver_name", "license_plate", "state", "trip_id", "vehicle"])

            #expect(try await client.liveActivities().map(\.activityID) == ["7F0C2C1E-ACTIVITY"])
            #expect(try await client.endLiveActivity(activityID: "7F0C2C1E-ACTIVITY").status == "cancelled")
            await #expect(throws: HeraldClientError.self) {
                try await client.registerLiveActivity(activityID: "x", kind: .trip, subjectID: "tr_nope", pushToken: Data(repeating: 1, count: 40))
            }
        }
    }

    @Test func asksForAStopsBroadcastChannelAndReadsItsTypes() async throws {
        try await HeraldClientTests.withServer { url, s in
            _ = try await s.runtime.transit.service.feeds.importFeed("default", source: .path(try TransitFixtures.sampleFeedPath()), requestedBy: "test")
            let client = HeraldClient(baseURL: url, tokenProvider: HeraldClientTests.Tokens([try await s.token("rita")]))
            let channel = try await client.departuresChannel(stopID: "BEATTY_AIRPORT")
            #expect(!channel.channelID.isEmpty && channel.environment == "production")
            #expect(channel.attributes == DeparturesActivityAttributes(stopID: "BEATTY_AIRPORT", stopName: "Nye County Airport (Demo)", feed: "default"))
            #expect(channel.contentState.stopID == "BEATTY_AIRPORT")
            // Another rider gets the same channel.
            let other = HeraldClient(baseURL: url, tokenProvider: HeraldClientTests.Tokens([try await s.token("ravi")]))
            #expect(try await other.departuresChannel(stopID: "BEATTY_AIRPORT").channelID == channel.channelID)
            await #expect(throws: HeraldClientError.self) { try await client.departuresChannel(stopID: "NOPE") }
            // A departure as the server writes it (epoch seconds, snake_case keys).
            let json =
                #"{"trip_id":"AB1","route_short_name":"10","headsign":null,"platform":null,"scheduled_at":1181055600,"expected_at":1181056020,"delay_seconds":420,"cancelled":false}"#
            let departure = try JSONDecoder().decode(DeparturesActivityAttributes.Departure.self, from: Data(json.utf8))
            #expect(departure.delaySeconds == 420 && departure.leavesAt == Date(timeIntervalSince1970: 1_181_056_020) && !departure.cancelled)
        }
    }
}
