import Foundation
import HTTPTypes
import HeraldCore
import HeraldNotifications
import HeraldServer
import HeraldServerTestSupport
import HeraldTrips
import Testing

/// A ride's Live Activity through the real application on both engines: started at the
/// match with the rider's push-to-start token, updated by transitions and ETAs within the
/// update budget, ended at completion; each push as APNs would receive it (the log sender
/// records the exact request).
@Suite struct LiveActivityTripTests {
    static let startToken = String(repeating: "5a", count: 40)
    static let activityToken = String(repeating: "ac", count: 40)

    /// The ActivityKit requests recorded so far, oldest first.
    static func activityPushes(_ path: String) -> [JSONValue] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            .filter { $0["live_activity_id"] != nil }.compactMap { $0["request"] }
    }

    /// Waits until the worker has nothing due before `now` and nothing in flight.
    static func settled(_ s: TestSession) async throws {
        let now = s.runtime.clock.now().epochMilliseconds
        try await waitUntil("live activity pushes sent", every: .milliseconds(20)) {
            try await s.runtime.database.withConnection { db in
                try await db.raw(
                    "SELECT COUNT(*) AS n FROM live_activities WHERE (due_at IS NOT NULL AND due_at <= \(bind: now)) OR lease_until IS NOT NULL"
                ).first()?.decode(column: "n", as: Int.self)
            } == 0
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aTripStartsUpdatesAndEndsItsLiveActivity(engine: TestEngine) async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        try await TripFlowTests.run(engine, { config in config.push.logFile = pushLog }) { s in
            let rider = try await s.token("rider")
            // The rider's app gave its push-to-start token (iOS 17.2+); again is 200.
            let startToken: JSONValue = ["kind": "trip", "push_token": .string(Self.startToken)]
            #expect(try await s.request(.put, "/api/v1/live-activities/start-tokens", token: rider, json: startToken).status == 201)
            #expect(try await s.request(.put, "/api/v1/live-activities/start-tokens", token: rider, json: startToken).status == 200)
            let listed = try await s.request(.get, "/api/v1/live-activities/start-tokens", token: rider)
            #expect(listed.data?["start_tokens"]?[0]?["kind"] == "trip" && listed.data?["start_tokens"]?[0]?["push_token"] == nil)

            let alex = try await TripFlowTests.driver(s, "alex", metersNorth: 800)
            let requestID = try #require(try await TripFlowTests.book(s, "rider").data?["request_id"]?.stringValue)
            let tripID = try #require(
                try await s.request(.post, "/api/v1/drivers/ride-requests/\(requestID)/accept", token: alex).data?["trip_id"]?.stringValue)

            // The match starts the activity: Apple's start payload, with an alert (required).
            try await Self.settled(s)
            let start = try #require(Self.activityPushes(pushLog).first)
            #expect(start["headers"]?["apns-push-type"] == "liveactivity" && start["headers"]?["apns-priority"] == "10")
            #expect(start["headers"]?["apns-topic"] == "<apns.topic>.push-type.liveactivity")
            let startAPS = try #require(start["payload"]?["aps"])
            #expect(startAPS["event"] == "start" && startAPS["attributes-type"] == "TripActivityAttributes")
            #expect(startAPS["attributes"]?["trip_id"]?.stringValue == tripID && startAPS["attributes"]?["pickup_address"] == "123 Market St, San Francisco")
            #expect(startAPS["content-state"]?["state"] == "ACCEPTED" && startAPS["content-state"]?["driver_name"] == "Alex")
            #expect(startAPS["content-state"]?["vehicle"] == "Silver Toyota Camry" && startAPS["content-state"]?["license_plate"] == "ABC123")
            #expect(startAPS["alert"]?["title"] == "Driver on the way" && startAPS["input-push-token"] == 1)
            #expect(startAPS["timestamp"]?.doubleValue == Double(TripFlowTests.start.epochMilliseconds / 1000))

            // The device started it and the app registers its update token; strangers cannot.
            let fields: [String: JSONValue] = [
                "activity_id": "act-1", "kind": "trip", "subject_id": .string(tripID), "push_token": .string(Self.activityToken),
            ]
            let register = JSONValue.object(fields)
            let stranger = try await s.request(.post, "/api/v1/live-activities", token: try await s.token("mallory"), json: register)
            #expect(stranger.status == 404)
            let registered = try await s.request(.post, "/api/v1/live-activities", token: rider, json: register)
            #expect(registered.status == 201 && registered.data?["status"] == "active" && registered.data?["content_state"]?["state"] == "ACCEPTED")
            #expect(try await s.request(.post, "/api/v1/live-activities", token: rider, json: register).status == 200)
            var other = fields
            other["subject_id"] = "tr_other"
            #expect(try await s.request(.post, "/api/v1/live-activities", token: rider, json: .object(other)).status == 404)

            // The driver approaches: the first ETA is pushed at once, at priority 5, no alert.
            func sample(_ metersNorth: Double) async throws {
                TripFlowTests.advance(s, 1)
                let reply = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex,
                    json: ["latitude": .number(37.7749 + metersNorth / 111_200), "longitude": -122.4194, "accuracy_meters": 5, "speed_mps": 10])
                #expect(reply.status == 200)
            }
            try await sample(790)
            try await Self.settled(s)
            var pushes = Self.activityPushes(pushLog)
            #expect(pushes.count == 2)
            let eta = try #require(pushes.last)
            #expect(eta["headers"]?["apns-priority"] == "5" && eta["payload"]?["aps"]?["alert"] == nil)
            #expect(eta["payload"]?["aps"]?["event"] == "update" && eta["payload"]?["aps"]?["content-state"]?["eta_kind"] == "pickup")
            let firstMinutes = try #require(eta["payload"]?["aps"]?["content-state"]?["eta_minutes"]?.doubleValue)
            #expect(eta["payload"]?["aps"]?["content-state"]?["driver_name"] == "Alex")
            let timestamp = try #require(eta["payload"]?["aps"]?["timestamp"]?.doubleValue)
            #expect(eta["payload"]?["aps"]?["stale-date"]?.doubleValue == timestamp + 900)

            // ETA changes inside the routine interval wait, and only the newest is sent.
            let service = s.runtime.notifications.liveActivities
            for minutes in [7, 6, 5, 4] {
                await service.publish(TripActivity.eta(tripID: tripID, minutes: minutes, kind: "pickup"))
                TripFlowTests.advance(s, 2)
            }
            try await Self.settled(s)
            #expect(Self.activityPushes(pushLog).count == 2)
            TripFlowTests.advance(s, 30)
            service.wake()
            try await Self.settled(s)
            pushes = Self.activityPushes(pushLog)
            #expect(pushes.count == 3 && pushes.last?["payload"]?["aps"]?["content-state"]?["eta_minutes"] == 4)
            #expect(firstMinutes != 4)

            // The same content again is no change.
            await service.publish(TripActivity.eta(tripID: tripID, minutes: 4, kind: "pickup"))
            TripFlowTests.advance(s, 60)
            service.wake()
            try await Self.settled(s)
            #expect(Self.activityPushes(pushLog).count == 3)

            // Transitions go at once at priority 10; the arrival alerts, the start does not.
            for step in ["ARRIVED", "IN_PROGRESS", "COMPLETED"] {
                TripFlowTests.advance(s, 5)
                _ = try await s.request(
                    .post, "/api/v1/drivers/location", token: alex, json: ["latitude": 37.7749, "longitude": -122.4194, "accuracy_meters": 5])
                #expect(try await s.request(.post, "/api/v1/trips/\(tripID)/transitions", token: alex, json: ["to": .string(step)]).status == 200)
                try await Self.settled(s)
            }
            pushes = Self.activityPushes(pushLog)
            let changes = pushes.filter { $0["headers"]?["apns-priority"] == "10" }.dropFirst()  // after the start
            #expect(changes.map { $0["payload"]?["aps"]?["content-state"]?["state"] } == ["ARRIVED", "IN_PROGRESS", "COMPLETED"])
            #expect(changes.map { $0["payload"]?["aps"]?["event"] } == ["update", "update", "end"])
            #expect(changes.first?["payload"]?["aps"]?["alert"]?["title"] == "Your driver has arrived")
            #expect(Array(changes)[1]["payload"]?["aps"]?["alert"] == nil)
            let end = try #require(changes.last?["payload"]?["aps"])
            #expect(end["dismissal-date"]?.doubleValue == (end["timestamp"]?.doubleValue ?? 0) + 900 && end["stale-date"] == nil)
            // Every timestamp is newer than the one before (a device drops older content).
            let stamps = pushes.compactMap { $0["payload"]?["aps"]?["timestamp"]?.doubleValue }
            #expect(stamps == stamps.sorted() && Set(stamps).count == stamps.count)
            // The whole ride: one start, a bounded number of updates, one end.
            #expect(pushes.count <= 8, "\(pushes.count) pushes")

            // Nothing follows the end; the activity reads as ended.
            await service.publish(TripActivity.eta(tripID: tripID, minutes: 2, kind: "dropoff"))
            try await Self.settled(s)
            #expect(Self.activityPushes(pushLog).count == pushes.count)
            let mine = try await s.request(.get, "/api/v1/live-activities", token: rider)
            #expect(mine.data?["live_activities"]?[0]?["status"] == "ended")
            // Every push but the start went to this activity.
            #expect(mine.data?["live_activities"]?[0]?["pushes_sent"]?.doubleValue == Double(pushes.count - 1))

            // An activity registered for a trip that is over is ended at once.
            var late = fields
            late["activity_id"] = "act-2"
            let ended = try await s.request(.post, "/api/v1/live-activities", token: rider, json: .object(late))
            #expect(ended.status == 201 && ended.data?["pending"] == true)
            try await Self.settled(s)
            #expect(Self.activityPushes(pushLog).last?["payload"]?["aps"]?["event"] == "end")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func registrationsRefuseBadInput(engine: TestEngine) async throws {
        try await TripFlowTests.run(engine) { s in
            let rider = try await s.token("rider")
            func status(_ method: HTTPTypes.HTTPRequest.Method, _ path: String, _ body: JSONValue) async throws -> (Int, String?) {
                let reply = try await s.request(method, path, token: rider, json: body)
                return (reply.status, reply.errorCode)
            }
            let token = JSONValue.string(Self.activityToken)
            #expect(try await status(.put, "/api/v1/live-activities/start-tokens", ["kind": "boat", "push_token": token]) == (422, "VALIDATION_FAILED"))
            #expect(try await status(.put, "/api/v1/live-activities/start-tokens", ["kind": "trip", "push_token": "xyz"]) == (422, "VALIDATION_FAILED"))
            #expect(
                try await status(.put, "/api/v1/live-activities/start-tokens", ["kind": "trip", "push_token": token, "app_id": "nope"])
                    == (422, "VALIDATION_FAILED"))
            #expect(
                try await status(.put, "/api/v1/live-activities/start-tokens", ["kind": "trip", "push_token": token, "environment": "dev"])
                    == (422, "VALIDATION_FAILED"))
            #expect(
                try await status(.put, "/api/v1/live-activities/start-tokens", ["kind": "trip", "push_token": token, "extra": 1])
                    == (422, "VALIDATION_FAILED"))
            #expect(
                try await status(.post, "/api/v1/live-activities", ["activity_id": "a", "kind": "trip", "subject_id": "tr_none", "push_token": token])
                    == (404, "NOT_FOUND"))
            #expect(try await status(.post, "/api/v1/live-activities", ["kind": "trip", "subject_id": "x", "push_token": token]) == (422, "VALIDATION_FAILED"))
            #expect(try await s.request(.delete, "/api/v1/live-activities/none", token: rider).status == 404)
            #expect(try await s.request(.delete, "/api/v1/live-activities/start-tokens/boat", token: rider).status == 422)
            #expect(try await s.request(.get, "/api/v1/live-activities").status == 401)
        }
    }
}
