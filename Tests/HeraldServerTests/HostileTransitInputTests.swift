import Foundation
import HeraldCore
import HeraldServer
import HeraldTestSupport
import SwiftProtobuf
import Testing

@testable import HeraldGTFS
import HeraldTransit

/// The inputs an attack used to stop a node, through the real application: a realtime
/// message whose numbers trap unbounded arithmetic (stored, so it came back at every start)
/// and forged itinerary ids.
@Suite struct HostileTransitInputTests {
    /// One message with each of the attack's numbers.
    static func hostileMessage(now: Int64) -> Data {
        var message = TransitRealtime_FeedMessage()
        message.header.gtfsRealtimeVersion = "2.0"
        // In nanoseconds.
        message.header.timestamp = UInt64(now) * 1_000_000_000
        var delayed = FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, Int32.min, false)])
        delayed.tripUpdate.delay = Int32.min
        var absurd = FeedMessages.tripUpdate("e2", trip: "AB2", date: "20070605")
        absurd.tripUpdate.stopTimeUpdate = [
            TransitRealtime_TripUpdate.StopTimeUpdate.with {
                $0.stopID = "BULLFROG"
                $0.arrival.time = Int64.min
                $0.departure.time = -1_000_000_000_000
            }
        ]
        var added = FeedMessages.tripUpdate("e3", trip: "EXTRA", date: "20070605")
        added.tripUpdate.trip.scheduleRelationship = .added
        added.tripUpdate.trip.directionID = 200
        added.tripUpdate.trip.routeID = "AB"
        added.tripUpdate.stopTimeUpdate = [
            TransitRealtime_TripUpdate.StopTimeUpdate.with {
                $0.stopID = "BEATTY_AIRPORT"
                $0.departure.time = now + 300
            },
            TransitRealtime_TripUpdate.StopTimeUpdate.with {
                $0.stopID = "BULLFROG"
                $0.arrival.time = now + 900
            },
        ]
        var alert = FeedMessages.alert("forever", route: "AB", severity: .warning, header: "Forever", start: 0, end: 0)
        alert.alert.activePeriod = [TransitRealtime_TimeRange.with { $0.end = .max }, TransitRealtime_TimeRange.with { $0.start = 1 << 62 }]
        message.entity = [delayed, absurd, added, alert]
        return try! message.serializedData()
    }

    /// Every answer built from the realtime data.
    static func readEverything(_ s: TestSession) async throws {
        for path in [
            "/api/v1/stops/BEATTY_AIRPORT/departures?limit=5", "/api/v1/stops/BULLFROG/departures?limit=5", "/api/v1/routes/AB/trips",
            "/api/v1/alerts", "/api/v1/alerts?route_id=AB",
        ] {
            #expect(try await s.request(.get, path).status == 200, "\(path)")
        }
        let alerts = try await s.request(.get, "/api/v1/alerts?route_id=AB")
        #expect(alerts.data?["alerts"]?[0]?["alert_id"] == "forever")
        #expect(alerts.data?["alerts"]?[0]?["active_period"]?["end"]?.stringValue?.hasPrefix("9999-12-31T") == true)
    }

    @Test(arguments: TestEngine.allCases)
    func aHostileRealtimeMessageNeitherStopsTheNodeNorItsRestart(engine: TestEngine) async throws {
        let config = try await TestServer.config(engine)
        let now = Int64(sampleMorning.timeIntervalSince1970)
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let posted = try await s.postProtobuf("/api/v1/transit/realtime", Self.hostileMessage(now: now), token: try await s.token("backend", .service))
            #expect(posted.status == 200)
            // The nanosecond header is no timestamp: the receive time stands in.
            #expect(posted.data?["feed_timestamp"] == .null)
            try await Self.readEverything(s)
        }
        // The message is stored: the restarted node decodes it again at start.
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning.addingTimeInterval(30))) { s in
            try await Self.readEverything(s)
            #expect(try await s.request(.get, "/readyz").status == 200)
        }
    }

    /// The attack's id: a real itinerary's ride with its day set to Int32.max ("zik0zj") and
    /// its shift moved a day. Subscribing and reconnecting are refused; the node serves on,
    /// through the overlay rebuild that used to reach the forged day.
    @Test func aForgedItineraryIDIsRefusedAndTheNodeServesOn() async throws {
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(.sqlite, setup: .live, clock: clock) { s in
            _ = try await s.importSample()
            let planned = try await TripPlanRoutesTests.plan(
                s, ["origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "FUR_CREEK_RES"], "depart_at": "2007-06-05T07:50:00-07:00", "max_itineraries": 1])
            let id = try #require(planned.data?["itineraries"]?[0]?["itinerary_id"]?.stringValue)
            var parts = id.split(separator: ".").map(String.init)
            var fields = parts[2].split(separator: "-").map(String.init)
            fields[1] = "zik0zj"
            fields[2] = String(Int(fields[2], radix: 36)! + 86_400, radix: 36)
            parts[2] = fields.joined(separator: "-")
            let forged = "itinerary:" + parts.joined(separator: ".")
            try await withNativeClient(s, token: try await s.token("ann")) { ann in
                _ = await ann.next(type: "connected", timeout: .seconds(60))
                ann.send(["type": "subscribe", "channel": .string(forged)])
                #expect(await ann.next(type: "error", timeout: .seconds(60))?["code"] == "FORBIDDEN")
                ann.send(["type": "reconnect", "channel": .string(forged), "last_event_id": "evt_0"])
                #expect(await ann.next(type: "error", timeout: .seconds(60)) != nil)
                // A realtime message rebuilds the overlays and re-evaluates what is followed.
                let now = Int64(sampleMorning.timeIntervalSince1970)
                let late = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 300, false)])], timestamp: now)
                #expect(try await s.postProtobuf("/api/v1/transit/realtime", late, token: try await s.token("backend", .service)).status == 200)
                clock.advance(by: 120)
                try await s.runtime.transit.service.reload()
                #expect(try await s.request(.get, "/api/v1/stops/BEATTY_AIRPORT/departures?limit=1").status == 200)
            }
        }
    }
}
