import Foundation
import HeraldCore
import HeraldServerTestSupport
import HeraldTransit
import SQLKit
import SwiftProtobuf
import Testing

@testable import HeraldGTFS
@testable import HeraldServer

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
                s,
                [
                    "origin": ["stop_id": "BEATTY_AIRPORT"], "destination": ["stop_id": "FUR_CREEK_RES"], "depart_at": "2007-06-05T07:50:00-07:00",
                    "max_itineraries": 1,
                ])
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
                try await s.runtime.transit.service.loader.reload()
                #expect(try await s.request(.get, "/api/v1/stops/BEATTY_AIRPORT/departures?limit=1").status == 200)
            }
        }
    }

    /// The sample feed's folder copied with some files rewritten.
    static func sampleCopy(_ edit: (inout [String: String]) -> Void) throws -> String {
        let source = try TransitFixtures.sampleFeedPath()
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: source) where name.hasSuffix(".txt") {
            files[name] = try String(contentsOfFile: source + "/" + name, encoding: .utf8)
        }
        edit(&files)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, contents) in files { try contents.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
        return folder
    }

    /// A version that would serve nothing (the attack's header-only stop_times.txt), or less
    /// than half of the version in service, is refused unless forced; the working version
    /// keeps serving.
    @Test(arguments: TestEngine.allCases)
    func aVersionThatLosesMostOfTheServiceIsRefusedUnlessForced(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let board = "/api/v1/stops/STAGECOACH/departures?limit=10"
            let before = try await s.request(.get, board).data?["departures"]?.arrayValue?.count ?? 0
            #expect(before > 0)
            let empty = try Self.sampleCopy { $0["stop_times.txt"] = "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n" }
            let refused = try await s.runtime.transit.service.feeds.importFeed("default", source: .path(empty), requestedBy: "test")
            #expect(refused.record.status == .failed)
            #expect(refused.record.error?.contains("serves no trips") == true)
            #expect(try await s.request(.get, board).data?["departures"]?.arrayValue?.count == before)
            // Most of the trips gone: refused too.
            let halved = try Self.sampleCopy { files in
                let lines = files["stop_times.txt"]!.split(separator: "\n", omittingEmptySubsequences: true)
                files["stop_times.txt"] =
                    ([lines[0]] + lines.dropFirst().filter { $0.hasPrefix("AB1,") || $0.hasPrefix("AB2,") }).joined(separator: "\n") + "\n"
            }
            let partial = try await s.runtime.transit.service.feeds.importFeed("default", source: .path(halved), requestedBy: "test")
            #expect(partial.record.status == .failed)
            #expect(partial.record.error?.contains("less than half") == true)
            // Forced, it replaces the version in service.
            let forced = try await s.runtime.transit.service.feeds.importFeed("default", source: .path(halved), requestedBy: "test", force: true)
            #expect(forced.record.status == .succeeded)
            #expect(try await s.request(.get, board).data?["departures"]?.arrayValue?.count == 0)
        }
    }

    /// One connection follows at most `realtime.max_channels_per_connection` channels, one
    /// user at most `transit.max_followed_itineraries` itineraries; an update re-evaluates
    /// only the itineraries whose runs it touched.
    @Test func whatOneUserMayFollowIsBoundedAndAnUpdateCostsWhatItTouched() async throws {
        let clock = ManualClock(sampleMorning)
        let configure: (inout HeraldConfig) -> Void = {
            $0.realtime.maxChannelsPerConnection = 3
            $0.transit.maxFollowedItineraries = 2
        }
        try await TestServer.run(.sqlite, setup: .live, clock: clock, configure: configure) { s in
            _ = try await s.importSample()
            func itinerary(_ from: String, _ to: String) async throws -> String {
                let planned = try await TripPlanRoutesTests.plan(
                    s,
                    [
                        "origin": ["stop_id": .string(from)], "destination": ["stop_id": .string(to)], "depart_at": "2007-06-05T07:50:00-07:00",
                        "max_itineraries": 1,
                    ],
                    token: try await s.token("planner"))
                return "itinerary:" + (try #require(planned.data?["itineraries"]?[0]?["itinerary_id"]?.stringValue))
            }
            let viaAB1 = try await itinerary("BEATTY_AIRPORT", "FUR_CREEK_RES")
            let other = try await itinerary("STAGECOACH", "BEATTY_AIRPORT")
            let third = try await itinerary("BULLFROG", "FUR_CREEK_RES")
            #expect(Set([viaAB1, other, third]).count == 3)
            let live = s.runtime.transit.service.live
            let svc = try await s.token("backend", .service)
            try await withNativeClient(s, token: try await s.token("ann")) { ann in
                _ = await ann.next(type: "connected", timeout: .seconds(60))
                for channel in ["stop:STAGECOACH", "stop:BULLFROG", "route:AB"] {
                    ann.send(["type": "subscribe", "channel": .string(channel)])
                    #expect(await ann.next(type: "subscribed", timeout: .seconds(60))?["channel"] == .string(channel))
                }
                ann.send(["type": "subscribe", "channel": "stop:AMV"])
                #expect(await ann.next(type: "error", timeout: .seconds(60))?["code"] == "TOO_MANY_CHANNELS")
                ann.send(["type": "unsubscribe", "channel": "stop:BULLFROG"])
                #expect(await ann.next(type: "unsubscribed", timeout: .seconds(60)) != nil)
                ann.send(["type": "unsubscribe", "channel": "route:AB"])
                #expect(await ann.next(type: "unsubscribed", timeout: .seconds(60)) != nil)
                // Two itineraries on this connection, a third on another is over the user's limit.
                for channel in [viaAB1, other] {
                    ann.send(["type": "subscribe", "channel": .string(channel)])
                    #expect(await ann.next(type: "subscribed", timeout: .seconds(60))?["channel"] == .string(channel))
                }
                try await withNativeClient(s, token: try await s.token("ann")) { second in
                    _ = await second.next(type: "connected", timeout: .seconds(60))
                    second.send(["type": "subscribe", "channel": .string(third)])
                    #expect(await second.next(type: "error", timeout: .seconds(60))?["code"] == "TOO_MANY_CHANNELS")
                }
                try await withNativeClient(s, token: try await s.token("bob")) { bob in
                    _ = await bob.next(type: "connected", timeout: .seconds(60))
                    bob.send(["type": "subscribe", "channel": .string(third)])
                    #expect(await bob.next(type: "subscribed", timeout: .seconds(60))?["channel"] == .string(third))
                    // A first update evaluates every followed itinerary (nothing was sent yet).
                    let now = Int64(sampleMorning.timeIntervalSince1970)
                    let elsewhere = FeedMessages.message(
                        [FeedMessages.tripUpdate("e9", trip: "AAMV1", date: "20070605", stops: [(1, 60, false)])], timestamp: now)
                    let warmed = try await s.postProtobuf("/api/v1/transit/realtime", elsewhere, token: svc)
                    #expect(warmed.status == 200)
                    for _ in 0..<2 { #expect(await ann.next(type: "itinerary_update", timeout: .seconds(60))?["payload"]?["status"] == "on_time") }
                    // AB1 late: only the itinerary riding it is evaluated again.
                    let before = live.itineraryStatusComputations
                    let late = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 300, false)])], timestamp: now)
                    let posted = try await s.postProtobuf("/api/v1/transit/realtime", late, token: svc)
                    #expect(posted.status == 200)
                    #expect(await ann.next(type: "itinerary_update", timeout: .seconds(60))?["payload"]?["status"] == "delayed")
                    #expect(live.itineraryStatusComputations - before == 1)
                }
            }
        }
    }

    /// TRACE is refused everywhere; a date its month does not have is no date; a realtime
    /// message for a feed nobody configured or imported is refused, not stored.
    @Test func smallRefusals() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            for path in ["/healthz", "/api/v1/stops/STAGECOACH", "/nowhere"] {
                let traced = try await s.request(.trace, path)
                #expect(traced.status == 405, "\(path)")
                #expect(traced.errorCode == "METHOD_NOT_ALLOWED")
            }
            let leap = try await s.request(.get, "/api/v1/stops/STAGECOACH/departures?at=2008-02-29T08:00:00-07:00")
            #expect(leap.status == 200)
            for bad in ["2008-02-30T08:00:00-07:00", "2007-02-29T08:00:00-07:00", "2007-04-31T08:00:00-07:00", "2007-13-01T08:00:00-07:00"] {
                #expect(try await s.request(.get, "/api/v1/stops/STAGECOACH/departures?at=\(bad)").status == 422, "\(bad)")
            }
            let svc = try await s.token("backend", .service)
            let message = FeedMessages.message(
                [FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 60, false)])], timestamp: Int64(sampleMorning.timeIntervalSince1970))
            let unknown = try await s.postProtobuf("/api/v1/transit/realtime?feed=nosuchfeed", message, token: svc)
            #expect(unknown.status == 422)
            #expect(unknown.json?["error"]?["details"]?["fields"]?[0]?["field"] == "feed")
            #expect(try await s.postProtobuf("/api/v1/transit/realtime?feed=default", message, token: svc).status == 200)
            let stored = try await s.runtime.database.withConnection { db in
                try await db.raw("SELECT source FROM transit_realtime_feeds ORDER BY source").all().map { try $0.decode(column: "source", as: String.self) }
            }
            #expect(!stored.contains { $0.contains("nosuchfeed") })
        }
    }

    /// Stored data that does not load (a damaged feed zip, a realtime message that no longer
    /// decodes) is skipped at start, named by /readyz and `herald doctor`, and the node serves
    /// on.
    @Test(arguments: TestEngine.allCases)
    func storedDataThatDoesNotLoadIsSkippedAndReported(engine: TestEngine) async throws {
        let config = try await TestServer.config(engine)
        let now = Int64(sampleMorning.timeIntervalSince1970)
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let message = FeedMessages.message([FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, 60, false)])], timestamp: now)
            #expect(try await s.postProtobuf("/api/v1/transit/realtime", message, token: try await s.token("backend", .service)).status == 200)
            try await s.runtime.database.withConnection { db in
                try await db.raw("UPDATE transit_feed_files SET bytes = \(bind: Data("not a zip".utf8))").run()
                try await db.raw("UPDATE transit_realtime_feeds SET payload = \(bind: Data([0x0A, 0xFF, 0xFF, 0x01]))").run()
            }
        }
        try await TestServer.run(config: config, clock: ManualClock(sampleMorning.addingTimeInterval(30))) { s in
            #expect(try await s.request(.get, "/healthz").status == 200)
            let ready = try await s.request(.get, "/readyz")
            #expect(ready.status == 200)
            let sources = ready.json?["transit"]?["problems"]?.arrayValue?.compactMap { $0["source"]?.stringValue } ?? []
            #expect(sources == ["default", "realtime:push-default"], "\(String(describing: ready.json))")
            // The feed is not served, and says so; the rest of the node is.
            #expect(try await s.request(.get, "/api/v1/stops/STAGECOACH/departures").errorCode == "TIMETABLE_NOT_LOADED")
        }
        let finding = await Doctor.storedTransit(config, logger: TestDatabase.logger)
        #expect(finding.status == .warning)
        #expect(finding.message.contains("default: the stored version") && finding.message.contains("realtime:push-default"), "\(finding)")
    }
}
