import Foundation
import HTTPTypes
import HeraldCore
import HeraldNotifications
import HeraldServer
import HeraldServerTestSupport
import SQLKit
import Testing

/// A stop's departures through the real application on both engines: one broadcast channel
/// for everyone who follows the stop, one push per change of its board whatever the number of
/// followers, and the channel deleted once no app asked for it (the log sender records each
/// channel request and broadcast as APNs would receive it).
@Suite struct LiveActivityChannelTests {
    static func lines(_ path: String) -> [JSONValue] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
    }

    static func broadcasts(_ path: String) -> [JSONValue] {
        lines(path).compactMap { $0["request"] }.filter { $0["path"] == "/4/broadcasts/apps/<apns.topic>" }
    }

    static func channelRequests(_ path: String) -> [JSONValue] { lines(path).compactMap { $0["channel"] } }

    static let ask: JSONValue = ["kind": "departures", "subject_id": "BEATTY_AIRPORT"]

    @Test(arguments: TestEngine.allCases)
    func aStopsChannelGetsOneBroadcastPerChangeWhateverItsFollowers(engine: TestEngine) async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        let clock = ManualClock(sampleMorning)
        try await TestServer.run(
            engine, clock: clock,
            configure: {
                $0.push.logFile = pushLog
                $0.notifications.liveActivities.routineIntervalSeconds = 0
            }
        ) { s in
            _ = try await s.importSample()
            let svc = try await s.token("backend", .service)
            // Twenty riders ask for the airport's channel: APNs makes one, all get its id.
            var ids: Set<String> = []
            var statuses: [Int] = []
            var first: TestReply?
            for rider in 0..<20 {
                let reply = try await s.request(.post, "/api/v1/live-activities/channels", token: try await s.token("rider\(rider)"), json: Self.ask)
                statuses.append(reply.status)
                if let id = reply.data?["channel_id"]?.stringValue { ids.insert(id) }
                if first == nil { first = reply }
            }
            #expect(statuses == [201] + Array(repeating: 200, count: 19))
            #expect(ids.count == 1 && Self.channelRequests(pushLog).count == 1)
            let channelID = try #require(ids.first)
            let made = try #require(first?.data)
            #expect(made["kind"] == "departures" && made["attributes_type"] == "DeparturesActivityAttributes")
            #expect(made["attributes"]?["stop_name"] == "Nye County Airport (Demo)" && made["message_storage_policy"] == "most_recent")
            #expect(made["content_state"]?["stop_id"] == "BEATTY_AIRPORT")
            // AB1 leaves the airport first, without a prediction yet.
            let scheduled = made["content_state"]?["departures"]?[0]
            #expect(scheduled?["trip_id"] == "AB1" && scheduled?["expected_at"] == .null && scheduled?["delay_seconds"] == .null)
            // An iOS 17 phone follows the same stop with its own activity's token.
            let device: JSONValue = [
                "activity_id": "dep-1", "kind": "departures", "subject_id": "BEATTY_AIRPORT", "push_token": .string(String(repeating: "d0", count: 40)),
            ]
            #expect(try await s.request(.post, "/api/v1/live-activities", token: try await s.token("rider0"), json: device).status == 201)

            // Nothing changed yet: nothing is sent.
            try await s.runtime.transit.service.loader.reload()
            try await LiveActivityTripTests.settled(s)
            #expect(Self.broadcasts(pushLog).isEmpty)

            // AB1 is 7 minutes late. One broadcast for the twenty riders, one
            // push to the iOS 17 phone.
            let now = Int64(sampleMorning.timeIntervalSince1970)
            func delay(_ seconds: Int32, at timestamp: Int64) async throws {
                let feed = FeedMessages.message(
                    [FeedMessages.tripUpdate("e1", trip: "AB1", date: "20070605", stops: [(1, seconds, false)])], timestamp: timestamp)
                #expect(try await s.postProtobuf("/api/v1/transit/realtime", feed, token: svc).status == 200)
                try await LiveActivityTripTests.settled(s)
            }
            try await delay(420, at: now - 10)
            var sent = Self.broadcasts(pushLog)
            #expect(sent.count == 1)
            let broadcast = try #require(sent.first)
            #expect(broadcast["headers"]?["apns-channel-id"]?.stringValue == channelID && broadcast["headers"]?["apns-push-type"] == "liveactivity")
            #expect(broadcast["headers"]?["apns-priority"] == "5" && broadcast["headers"]?["apns-topic"] == nil)
            let aps = try #require(broadcast["payload"]?["aps"])
            #expect(aps["event"] == "update" && broadcast["headers"]?["apns-expiration"]?.stringValue == "\(Int(aps["stale-date"]?.doubleValue ?? 0))")
            let ab1 = try #require(aps["content-state"]?["departures"]?[0])
            #expect(
                ab1["trip_id"] == "AB1" && ab1["delay_seconds"] == 420
                    && ab1["expected_at"]?.doubleValue == ab1["scheduled_at"].map { ($0.doubleValue ?? 0) + 420 })
            let devicePushes = LiveActivityTripTests.activityPushes(pushLog).filter { $0["path"] == "/3/device/<token>" }
            #expect(devicePushes.count == 1 && devicePushes.first?["payload"]?["aps"]?["content-state"] == aps["content-state"])

            // The same prediction again changes nothing; a new one is one more broadcast.
            try await delay(420, at: now - 5)
            #expect(Self.broadcasts(pushLog).count == 1)
            try await delay(600, at: now - 2)
            sent = Self.broadcasts(pushLog)
            #expect(sent.count == 2 && sent.last?["payload"]?["aps"]?["content-state"]?["departures"]?[0]?["delay_seconds"] == 600)
            #expect((sent.last?["payload"]?["aps"]?["timestamp"]?.doubleValue ?? 0) > (aps["timestamp"]?.doubleValue ?? 0))
            let listed = try await s.runtime.database.withConnection { db in
                try await db.raw("SELECT sent_count FROM live_activities WHERE mode = 'channel'").all().map {
                    try $0.decode(column: "sent_count", as: Int.self)
                }
            }
            #expect(listed == [2])

            // Twelve hours without a request: the channel is deleted at APNs; the next request
            // makes a new one.
            clock.advance(by: 43_201)
            s.runtime.notifications.liveActivities.wake()
            try await waitUntil("the idle channel deleted", every: .milliseconds(20)) {
                Self.channelRequests(pushLog).contains { $0["method"] == "DELETE" && $0["channel_id"]?.stringValue == channelID }
            }
            try await LiveActivityTripTests.settled(s)
            let again = try await s.request(.post, "/api/v1/live-activities/channels", token: try await s.token("rider1"), json: Self.ask)
            #expect(again.status == 201 && again.data?["channel_id"]?.stringValue != channelID)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func channelRequestsRefuseBadInput(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let ann = try await s.token("ann")
            func answer(_ body: JSONValue) async throws -> (Int, String?) {
                let reply = try await s.request(.post, "/api/v1/live-activities/channels", token: ann, json: body)
                return (reply.status, reply.errorCode)
            }
            #expect(try await s.request(.post, "/api/v1/live-activities/channels", json: Self.ask).status == 401)
            #expect(try await answer(["kind": "trip", "subject_id": "tr_1"]) == (422, "VALIDATION_FAILED"))
            #expect(try await answer(["kind": "departures", "subject_id": "NOPE"]).0 == 404)
            #expect(try await answer(["kind": "departures", "subject_id": "BEATTY_AIRPORT", "app_id": "other"]) == (422, "VALIDATION_FAILED"))
            #expect(try await answer(["kind": "departures", "subject_id": "BEATTY_AIRPORT", "environment": "dev"]) == (422, "VALIDATION_FAILED"))
            #expect(try await answer(["kind": "departures", "subject_id": "BEATTY_AIRPORT", "extra": 1]) == (422, "VALIDATION_FAILED"))
            #expect(try await answer(["kind": "departures"]) == (422, "VALIDATION_FAILED"))
            // Sandbox and production channels are different channels at APNs.
            let production = try await s.request(.post, "/api/v1/live-activities/channels", token: ann, json: Self.ask)
            let sandboxAsk: JSONValue = ["kind": "departures", "subject_id": "BEATTY_AIRPORT", "environment": "sandbox"]
            let sandbox = try await s.request(.post, "/api/v1/live-activities/channels", token: ann, json: sandboxAsk)
            #expect(production.status == 201 && sandbox.status == 201 && sandbox.data?["environment"] == "sandbox")
            #expect(production.data?["channel_id"] != sandbox.data?["channel_id"])
        }
    }
}
