import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

/// A dispatch job's Live Activity through the real application on both engines: started at
/// the claim, every status change pushed at once, ended at completion; an expiry ends an
/// activity the app started for a pending job.
@Suite struct LiveActivityJobTests {
    @Test(arguments: TestEngine.allCases)
    func aJobStartsUpdatesAndEndsItsLiveActivity(engine: TestEngine) async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        let clock = ManualClock(try #require(Timestamp.parse("2026-11-25T14:00:00Z")))
        try await TestServer.run(engine, clock: clock, configure: { $0.push.logFile = pushLog }) { s in
            let cust = try await s.token("cust")
            #expect(
                try await s.request(
                    .put, "/api/v1/live-activities/start-tokens", token: cust,
                    json: ["kind": "job", "push_token": .string(String(repeating: "9f", count: 40))]
                ).status == 201)
            let near = try await DispatchRoutesTests.driver(s, "near", kilometersNorth: 5)
            let (id, booked) = try await DispatchRoutesTests.book(s)
            #expect(booked.status == 201)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near).status == 200)
            try await LiveActivityTripTests.settled(s)
            let start = try #require(LiveActivityTripTests.activityPushes(pushLog).first?["payload"]?["aps"])
            #expect(start["event"] == "start" && start["attributes-type"] == "JobActivityAttributes")
            #expect(start["attributes"] == ["job_id": .string(id), "address": "1 Market St"])
            #expect(start["content-state"] == ["job_id": .string(id), "status": "accepted", "driver_name": "Driver"])

            let registered = try await s.request(
                .post, "/api/v1/live-activities", token: cust,
                json: ["activity_id": "job-act", "kind": "job", "subject_id": .string(id), "push_token": .string(String(repeating: "8e", count: 40))])
            #expect(registered.status == 201 && registered.data?["content_state"]?["status"] == "accepted")
            // The assigned driver may follow it too; another driver may not.
            let other = try await DispatchRoutesTests.driver(s, "other", kilometersNorth: 9)
            let stranger = try await s.request(
                .post, "/api/v1/live-activities", token: other,
                json: ["activity_id": "x", "kind": "job", "subject_id": .string(id), "push_token": .string(String(repeating: "7d", count: 40))])
            #expect(stranger.status == 404)

            for step in ["en_route", "arrived", "started", "completed"] {
                clock.advance(by: 60)
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: near, json: ["status": .string(step)]).status == 200)
                try await LiveActivityTripTests.settled(s)
            }
            let pushes = LiveActivityTripTests.activityPushes(pushLog).dropFirst()
            #expect(pushes.map { $0["payload"]?["aps"]?["content-state"]?["status"] } == ["en_route", "arrived", "started", "completed"])
            #expect(pushes.map { $0["payload"]?["aps"]?["event"] } == ["update", "update", "update", "end"])
            #expect(pushes.allSatisfy { $0["headers"]?["apns-priority"] == "10" })
            #expect(pushes.map { $0["payload"]?["aps"]?["alert"]?["title"] } == [nil, "Driver arrived", nil, nil])
            #expect(Array(pushes)[1]["payload"]?["aps"]?["alert"]?["body"] == "Driver has arrived.")  // the first name, as the trip says it
        }
    }

    @Test func anExpiredJobEndsTheActivityTheAppStarted() async throws {
        let pushLog = try TestDatabase.temporaryDirectory() + "/pushes.jsonl"
        let clock = ManualClock(try #require(Timestamp.parse("2026-11-25T14:00:00Z")))
        try await TestServer.run(.sqlite, clock: clock, configure: { $0.push.logFile = pushLog }) { s in
            let cust = try await s.token("cust")
            let (id, booked) = try await DispatchRoutesTests.book(s)
            #expect(booked.status == 201)
            // The app started an activity at booking ("finding a driver").
            let registered = try await s.request(
                .post, "/api/v1/live-activities", token: cust,
                json: ["activity_id": "a", "kind": "job", "subject_id": .string(id), "push_token": .string(String(repeating: "6c", count: 40))])
            #expect(registered.status == 201 && registered.data?["content_state"]?["status"] == "pending")
            // No driver takes it: the rounds run out and the job expires.
            for _ in 0..<5 {
                clock.advance(by: 121)
                try await s.runtime.dispatch.service.offers.runDue()
            }
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: cust).data?["status"] == "expired")
            try await LiveActivityTripTests.settled(s)
            let end = try #require(LiveActivityTripTests.activityPushes(pushLog).last?["payload"]?["aps"])
            #expect(end["event"] == "end" && end["content-state"]?["status"] == "expired" && end["alert"]?["title"] == "No driver available")
        }
    }
}
