import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

/// `POST /api/v1/trips/plan` on the sample feed, each answer checked against stop_times.txt
/// by hand (AB1 BEATTY_AIRPORT 8:00 → BULLFROG 8:10; BFC1 BULLFROG 8:20 → FUR_CREEK_RES
/// 9:20; STBA STAGECOACH → BEATTY_AIRPORT, 20 minutes, every 30 minutes from 6:00).
@Suite struct TripPlanRoutesTests {
    static func plan(_ s: TestSession, _ body: JSONValue, token: String? = nil) async throws -> TestReply {
        try await s.request(.post, "/api/v1/trips/plan", token: token, json: body)
    }

    static func departures(_ reply: TestReply) -> [String] {
        reply.data?["itineraries"]?.arrayValue?.compactMap { $0["departure_time"]?.stringValue } ?? []
    }

    @Test(arguments: TestEngine.allCases)
    func plansFromCoordinatesWithAWalkAndATransfer(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(sampleMorning)) { s in
            let body: JSONValue = [
                "origin": ["type": "coordinates", "lat": 36.8685, "lon": -116.7846, "name": "Terminal"],
                "destination": ["type": "stop_id", "stop_id": "FUR_CREEK_RES"],
                "depart_at": "2007-06-05T07:50:00-07:00", "max_itineraries": 1,
            ]
            #expect(try await Self.plan(s, body).errorCode == "TIMETABLE_NOT_LOADED")
            _ = try await s.importSample()
            let reply = try await Self.plan(s, body)
            #expect(reply.status == 200)
            #expect(reply.data?["search"] == "depart_at")
            #expect(reply.data?["requested_time"] == "2007-06-05T07:50:00-07:00")
            let itinerary = try #require(reply.data?["itineraries"]?[0])
            #expect(reply.data?["itineraries"]?.arrayValue?.count == 1)
            #expect(itinerary["transfers"] == 1)
            #expect(itinerary["arrival_time"] == "2007-06-05T09:20:00-07:00")
            // fare_rules.txt: fare p ($1.25, no transfers) on AB and on BFC: two fares.
            #expect(itinerary["fare_cents"] == 250 && itinerary["fare_currency"] == "USD")
            #expect(itinerary["realtime_data_available"] == false)
            let legs = try #require(itinerary["legs"]?.arrayValue)
            #expect(legs.map { $0["mode"]?.stringValue ?? "" } == ["WALK", "BUS", "BUS"])
            // The walk (about 6 m: 8 m with the detour factor) ends as AB1 leaves: nobody waits at home.
            #expect(legs[0]["from"]?["name"] == "Terminal")
            #expect(legs[0]["to"]?["stop_id"] == "BEATTY_AIRPORT")
            #expect(legs[0]["arrival_time"] == "2007-06-05T08:00:00-07:00")
            #expect((legs[0]["distance_meters"]?.doubleValue ?? 0) > 0 && (legs[0]["distance_meters"]?.doubleValue ?? 99) < 20)
            #expect(itinerary["departure_time"] == legs[0]["departure_time"])
            #expect(legs[1]["route_id"] == "AB" && legs[1]["route_short_name"] == "10" && legs[1]["trip_id"] == "AB1")
            #expect(legs[1]["headsign"] == "to Bullfrog")
            #expect(legs[1]["from"]?["stop_id"] == "BEATTY_AIRPORT" && legs[1]["from"]?["departure_time"] == "2007-06-05T08:00:00-07:00")
            #expect(legs[1]["to"]?["stop_id"] == "BULLFROG" && legs[1]["to"]?["arrival_time"] == "2007-06-05T08:10:00-07:00")
            #expect(legs[1]["stops_between"] == 0 && legs[1]["intermediate_stops"] == .array([]))
            #expect(legs[2]["trip_id"] == "BFC1" && legs[2]["from"]?["departure_time"] == "2007-06-05T08:20:00-07:00")
            #expect(legs[2]["duration_minutes"] == 60)
            #expect((legs[2]["polyline"]?.stringValue ?? "").count > 4)
            #expect(reply.headers[.cacheControl] == "no-store")
        }
    }

    @Test func rangesArriveByAndTheNextDepartures() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let between: JSONValue = [
                "origin": ["type": "stop_id", "stop_id": "STAGECOACH"], "destination": ["type": "stop_id", "stop_id": "BEATTY_AIRPORT"],
                "depart_at": "2007-06-05T06:00:00-07:00", "depart_until": "2007-06-05T07:10:00-07:00", "max_itineraries": 8,
            ]
            let range = try await Self.plan(s, between)
            #expect(range.data?["search"] == "depart_between")
            #expect(Self.departures(range) == ["2007-06-05T06:00:00-07:00", "2007-06-05T06:30:00-07:00", "2007-06-05T07:00:00-07:00"])
            // Without a window: the next three runs after 06:10.
            let next = try await Self.plan(
                s, ["origin": ["stop_id": "STAGECOACH"], "destination": ["stop_id": "BEATTY_AIRPORT"], "depart_at": "2007-06-05T06:10:00-07:00"])
            #expect(Self.departures(next) == ["2007-06-05T06:30:00-07:00", "2007-06-05T07:00:00-07:00", "2007-06-05T07:30:00-07:00"])
            // Arrive at the airport by 08:05: the latest run that does is 07:30 (at 07:50).
            let arrive = try await Self.plan(
                s, ["origin": ["stop_id": "STAGECOACH"], "destination": ["stop_id": "BEATTY_AIRPORT"], "arrive_by": "2007-06-05T08:05:00-07:00"])
            #expect(arrive.data?["search"] == "arrive_by")
            #expect(Self.departures(arrive).first == "2007-06-05T07:30:00-07:00")
            #expect(arrive.data?["itineraries"]?[0]?["arrival_time"] == "2007-06-05T07:50:00-07:00")
            // NADAV to NANAA, 600 m apart (780 m of walking): the walk alone comes first and
            // counts among max_itineraries.
            let near: JSONValue = [
                "origin": ["lat": 36.914893, "lon": -116.76821], "destination": ["lat": 36.914944, "lon": -116.761472], "max_itineraries": 1,
            ]
            let walk = try await Self.plan(s, near)
            #expect(walk.data?["itineraries"]?.arrayValue?.count == 1)
            #expect(walk.data?["itineraries"]?[0]?["legs"]?.arrayValue?.map { $0["mode"]?.stringValue ?? "" } == ["WALK"])
            #expect(walk.data?["itineraries"]?[0]?["itinerary_id"] == .null)
            #expect(walk.data?["itineraries"]?[0]?["walking_distance_meters"]?.doubleValue.map { (760...800).contains($0) } == true)
            // Leaving now (08:05) without a time.
            let now = try await Self.plan(s, ["origin": ["stop_id": "STAGECOACH"], "destination": ["stop_id": "BEATTY_AIRPORT"], "max_itineraries": 1])
            #expect(Self.departures(now) == ["2007-06-05T08:30:00-07:00"])
        }
    }

    @Test func refusesWhatCannotBePlannedWithItsCode() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning), configure: { $0.rateLimits.enabled = false }) { s in
            _ = try await s.importSample()
            let airport: JSONValue = ["type": "stop_id", "stop_id": "BEATTY_AIRPORT"]
            let far = try await Self.plan(s, ["origin": ["type": "coordinates", "lat": 0, "lon": 0], "destination": airport])
            #expect(far.status == 422 && far.errorCode == "OUTSIDE_SERVICE_AREA")
            #expect(far.json?["error"]?["details"]?["field"] == "origin")
            let dates = try await Self.plan(s, ["origin": ["stop_id": "STAGECOACH"], "destination": airport, "depart_at": "2030-01-01T08:00:00-08:00"])
            #expect(dates.status == 422 && dates.errorCode == "OUTSIDE_SERVICE_DATES")
            #expect(dates.json?["error"]?["details"]?["service_end_date"] == "2010-12-31")
            #expect(try await Self.plan(s, ["origin": ["stop_id": "NOPE"], "destination": airport]).errorCode == "STOP_NOT_FOUND")
            // AAMV runs at weekends only: nothing from Tuesday to Wednesday reaches Amargosa Valley.
            let none = try await Self.plan(s, ["origin": airport, "destination": ["stop_id": "AMV"]])
            #expect(none.status == 404 && none.errorCode == "NO_ROUTE_FOUND")
            // Only rail: the sample feed has buses only.
            let rail = try await Self.plan(s, ["origin": airport, "destination": ["stop_id": "BULLFROG"], "preferences": ["modes": ["rail"]]])
            #expect(rail.errorCode == "NO_ROUTE_FOUND")
            #expect(try await Self.plan(s, ["origin": airport, "destination": ["stop_id": "BULLFROG"], "preferences": ["modes": ["bus"]]]).status == 200)
            // The words and route types apps send fold the same way as /routes?route_type= reads them.
            #expect(
                try await Self.plan(s, ["origin": airport, "destination": ["stop_id": "BULLFROG"], "preferences": ["modes": ["coach", 700]]]).status == 200)
            #expect(
                try await Self.plan(s, ["origin": airport, "destination": ["stop_id": "BULLFROG"], "preferences": ["modes": ["train", "metro", "401"]]])
                    .errorCode == "NO_ROUTE_FOUND")
            let same = try await Self.plan(s, ["origin": airport, "destination": airport])
            #expect(same.status == 422 && same.json?["error"]?["details"]?["fields"]?[0]?["field"] == "destination")
            let bad = try await Self.plan(
                s,
                [
                    "origin": ["type": "coordinates", "lat": 91, "lon": -116], "destination": ["type": "ship"], "depart_at": "soon",
                    "arrive_by": "2007-06-05T08:00:00-07:00", "preferences": ["max_walking_distance": -1, "modes": ["plane"], "pets": true],
                    "max_itineraries": 0, "extra": 1,
                ])
            #expect(bad.status == 422)
            let fields = Set(bad.json?["error"]?["details"]?["fields"]?.arrayValue?.compactMap { $0["field"]?.stringValue } ?? [])
            #expect(
                fields == [
                    "extra", "origin.lat", "destination.type", "depart_at", "preferences.pets", "preferences.max_walking_distance", "preferences.modes",
                    "max_itineraries",
                ])
            let range = try await Self.plan(
                s,
                [
                    "origin": airport, "destination": ["stop_id": "BULLFROG"], "depart_at": "2007-06-05T06:00:00-07:00",
                    "depart_until": "2007-06-05T12:00:00-07:00",
                ])
            #expect(range.json?["error"]?["details"]?["fields"]?[0]?["field"] == "depart_until")
        }
    }

    @Test func realtimeDelaysChangeThePlan() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let svc = try await s.token("backend", .service)
            let now = Int64(sampleMorning.timeIntervalSince1970)
            // AB1 leaves 10 minutes late: at Bullfrog 8:20, no minute left to change to BFC1.
            let feed = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 600, false)])], timestamp: now - 30)
            #expect(try await s.postProtobuf("/api/v1/transit/realtime", feed, token: svc).status == 200)
            let body: JSONValue = [
                "origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "FUR_CREEK_RES"], "depart_at": "2007-06-05T07:50:00-07:00",
                "max_itineraries": 1,
            ]
            let reply = try await Self.plan(s, body)
            let itinerary = try #require(reply.data?["itineraries"]?[0])
            #expect(itinerary["arrival_time"] == "2007-06-06T09:20:00-07:00")
            // Directly to Bullfrog: AB1 at its predicted times, with its schedule and delay.
            let direct = try await Self.plan(
                s,
                [
                    "origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "BULLFROG"], "depart_at": "2007-06-05T07:50:00-07:00",
                    "max_itineraries": 1,
                ])
            let leg = try #require(direct.data?["itineraries"]?[0]?["legs"]?[0])
            #expect(leg["trip_id"] == "AB1" && leg["realtime"] == true)
            #expect(leg["from"]?["departure_time"] == "2007-06-05T08:10:00-07:00")
            #expect(leg["from"]?["scheduled_departure_time"] == "2007-06-05T08:00:00-07:00")
            #expect(leg["from"]?["departure_delay_seconds"] == 600)
            #expect(leg["to"]?["arrival_time"] == "2007-06-05T08:20:00-07:00")
            #expect(direct.data?["itineraries"]?[0]?["realtime_data_available"] == true)
        }
    }

    @Test func planningHasTheTransitAPIsRateLimit() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let body: JSONValue = ["origin": ["stop_id": "STAGECOACH"], "destination": ["stop_id": "BEATTY_AIRPORT"], "max_itineraries": 1]
            for _ in 0..<10 { #expect(try await Self.plan(s, body).status == 200) }
            let limited = try await Self.plan(s, body)
            #expect(limited.status == 429 && limited.json?["error"]?["details"]?["limit"] == 10)
            let ann = try await s.token("ann")
            for _ in 0..<30 { #expect(try await Self.plan(s, body, token: ann).status == 200) }
            #expect(try await Self.plan(s, body, token: ann).status == 429)
        }
    }
}

extension TripPlanRoutesTests {
    /// A planned itinerary followed on `itinerary:{id}`: AB1 then BFC1 at Bullfrog (10 minutes
    /// to change). AB1 five minutes late leaves four minutes to spare: `delayed`; ten minutes
    /// late it arrives as BFC1 leaves: `disrupted`, the connection missed, and a replan from
    /// Bullfrog (tomorrow's BFC1, at Furnace Creek 09:20 on the 6th).
    @Test func aFollowedItineraryHearsOfAMissedConnectionWithAReplan() async throws {
        try await TestServer.run(.sqlite, setup: .live, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let svc = try await s.token("backend", .service)
            let planned = try await Self.plan(
                s,
                [
                    "origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "FUR_CREEK_RES"], "depart_at": "2007-06-05T07:50:00-07:00",
                    "max_itineraries": 1,
                ])
            let id = try #require(planned.data?["itineraries"]?[0]?["itinerary_id"]?.stringValue)
            try await withNativeClient(s, token: try await s.token("ann")) { ann in
                _ = await ann.next(type: "connected")
                ann.send(["type": "subscribe", "channel": "itinerary:v1.fv_nope.1-2-3-4-5"])
                #expect(await ann.next(type: "error")?["code"] == "FORBIDDEN")
                ann.send(["type": "subscribe", "channel": .string("itinerary:" + id)])
                #expect(await ann.next(type: "subscribed")?["channel"] == .string("itinerary:" + id))
                let now = Int64(sampleMorning.timeIntervalSince1970)
                let late = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 300, false)])], timestamp: now)
                #expect(try await s.postProtobuf("/api/v1/transit/realtime", late, token: svc).status == 200)
                let first = try #require(await ann.next(type: "itinerary_update"))
                #expect(first["payload"]?["status"] == "delayed")
                #expect(first["payload"]?["legs"]?[0]?["arrival_time"] == "2007-06-05T08:15:00-07:00")
                #expect(first["payload"]?["problems"] == .array([]))
                let later = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 600, false)])], timestamp: now)
                #expect(try await s.postProtobuf("/api/v1/transit/realtime", later, token: svc).status == 200)
                let second = try #require(await ann.next(type: "itinerary_update"))
                #expect(second["payload"]?["status"] == "disrupted")
                #expect(second["payload"]?["problems"]?[0]?["kind"] == "connection_missed")
                #expect(second["payload"]?["problems"]?[0]?["leg"] == 1)
                #expect(second["payload"]?["replan"]?[0]?["arrival_time"] == "2007-06-06T09:20:00-07:00")
                #expect(second["payload"]?["replan"]?[0]?["legs"]?[0]?["from"]?["stop_id"] == "BULLFROG")
                // A reconnect gets the status as it is.
                ann.send(["type": "reconnect", "channel": .string("itinerary:" + id), "last_event_id": "evt_0"])
                let sync = try #require(await ann.next(type: "state_sync"))
                #expect(sync["itinerary"]?["status"] == "disrupted")
            }
        }
    }
}
