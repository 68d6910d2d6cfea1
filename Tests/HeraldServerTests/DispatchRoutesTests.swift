import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing

@testable import HeraldRealtime

/// Dispatch through the real application: REST routes, the database, offer rounds, claims.
@Suite struct DispatchRoutesTests {
    static let job = (lat: 37.7749, lng: -122.4194)

    /// A driver `kilometers` north of the job site, approved and online unless told otherwise.
    @discardableResult
    static func driver(
        _ s: TestSession, _ id: String, kilometersNorth: Double?, approve: Bool = true, online: Bool = true
    ) async throws -> String {
        let token = try await s.token(id, .driver)
        let profile = try await s.request(.put, "/api/v1/drivers/me", token: token, json: ["name": .string("Driver \(id)"), "truck_type": "box_truck"])
        #expect(profile.status == 201 && profile.data?["approval_status"] == "pending")
        if approve {
            let approved = try await s.request(
                .post, "/api/v1/operators/drivers/\(id)/approval", token: try await s.token("ops", .operator), json: ["status": "approved"])
            #expect(approved.status == 200 && approved.data?["approval_status"] == "approved")
        }
        if online { #expect(try await s.request(.post, "/api/v1/drivers/online", token: token, json: ["online": true]).data?["online"] == true) }
        guard let kilometersNorth else { return token }
        let location = try await s.request(
            .post, "/api/v1/drivers/location", token: token,
            json: ["lat": .number(job.lat + kilometersNorth / 111.2), "lng": .number(job.lng), "accuracy": 5, "sequence": 1])
        #expect(location.status == 200 && location.data?["accepted"] == true)
        return token
    }

    static func book(_ s: TestSession, _ customer: String = "cust", extra: [String: JSONValue] = [:]) async throws -> (id: String, reply: TestReply) {
        var body: [String: JSONValue] = [
            "address": "1 Market St", "lat": .number(job.lat), "lng": .number(job.lng), "volume_estimate": 4,
            "items": [["category": "furniture", "quantity": 1]],
        ]
        for (key, value) in extra { body[key] = value }
        let reply = try await s.request(.post, "/api/v1/jobs", token: try await s.token(customer), json: .object(body))
        return (reply.data?["id"]?.stringValue ?? "", reply)
    }

    static func offers(_ s: TestSession, _ jobID: String) async throws -> [String: JSONValue] {
        let reply = try await s.request(.get, "/api/v1/operators/jobs/\(jobID)/offers", token: try await s.token("ops", .operator))
        var byDriver: [String: JSONValue] = [:]
        for index in 0..<100 {
            guard let offer = reply.data?["offers"]?[index], let driver = offer["driver_id"]?.stringValue else { break }
            byDriver[driver] = offer
        }
        return byDriver
    }

    @Test(arguments: TestEngine.allCases)
    func bookOfferClaimAndFollowTheJobToCompletion(engine: TestEngine) async throws {
        // A Wednesday afternoon in the pricing time zone (UTC): no weekend or after-hours surcharge.
        let clock = ManualClock(try #require(Timestamp.parse("2026-11-25T14:00:00Z")))
        try await TestServer.run(engine, clock: clock) { s in
            let near = try await Self.driver(s, "near", kilometersNorth: 5)
            let other = try await Self.driver(s, "other", kilometersNorth: 12)
            try await Self.driver(s, "far", kilometersNorth: 80)
            try await Self.driver(s, "unapproved", kilometersNorth: 1, approve: false)
            try await Self.driver(s, "offline", kilometersNorth: 1, online: false)
            let (id, booked) = try await Self.book(s)
            #expect(booked.status == 201)
            #expect(booked.data?["status"] == "pending" && booked.data?["offer_round"] == 1)
            // 4900 base + 4 yd × 3500 + 4500 furniture.
            #expect(booked.data?["price"]?["amount_minor"] == 23_400)
            let offers = try await Self.offers(s, id)
            #expect(Set(offers.keys) == ["near", "other"])
            #expect(offers["near"]?["round"] == 1 && (offers["near"]?["distance_m"]?.doubleValue ?? 0) > 4_900)
            #expect(offers["near"]?["channel"] == "inbox")  // no socket, no device registered
            // The feed lists the job, nearest first, with its distance.
            let feed = try await s.request(.get, "/api/v1/drivers/jobs/available", token: near)
            #expect(feed.data?["jobs"]?[0]?["id"]?.stringValue == id)
            // The job_new notification reached the offered drivers' inboxes.
            let inbox = try await s.request(.get, "/api/v1/notifications", token: near)
            #expect(inbox.data?["notifications"]?[0]?["type"] == "job_new")
            // Claim: the winner gets 200 (again on a repeat), the other 409 with the dispatch design's message.
            let won = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near)
            #expect(won.status == 200 && won.data?["job"]?["status"] == "accepted" && won.data?["job"]?["driver"]?["name"] == "Driver near")
            let lost = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: other)
            #expect(lost.status == 409 && lost.errorCode == "JOB_ALREADY_ACCEPTED")
            #expect(lost.json?["error"]?["message"] == "Job already accepted by another driver")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near).status == 200)
            #expect(try await s.request(.get, "/api/v1/drivers/jobs/available", token: other).data?["count"] == 0)
            let decided = try await Self.offers(s, id)
            #expect(decided["near"]?["outcome"] == "won" && decided["other"]?["outcome"] == "lost")
            // The customer was told, with the driver's name.
            let cust = try await s.token("cust")
            let told = try await s.request(.get, "/api/v1/notifications", token: cust)
            #expect(told.data?["notifications"]?[0]?["type"] == "driver_assigned")
            #expect(told.data?["notifications"]?[0]?["body"] == "Driver near has accepted your job.")
            // The price-adjustment design's "call the customer": the assigned driver sees the
            // customer's phone while the job is active; nobody else does, and not after the end.
            let phone = try await s.request(.put, "/api/v1/me", token: cust, json: ["phone": "+14155550123", "display_name": "Casey"])
            #expect(phone.status == 200 && phone.data?["phone"] == "+14155550123")
            #expect(try await s.request(.put, "/api/v1/me", token: cust, json: ["phone": "0415 555 012"]).status == 422)
            let driverView = try await s.request(.get, "/api/v1/jobs/\(id)", token: near)
            #expect(driverView.data?["customer"] == ["id": "cust", "name": "Casey", "phone": "+14155550123"])
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: cust).data?["customer"] == nil)
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("ops", .operator)).data?["customer"] == nil)
            // Steps in order only, by the assigned driver only.
            let skip = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: near, json: ["status": "arrived"])
            #expect(skip.status == 409 && skip.errorCode == "INVALID_TRANSITION" && skip.json?["error"]?["details"]?["allowed_transitions"] == ["en_route"])
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: other, json: ["status": "en_route"]).status == 404)
            for step in ["en_route", "arrived", "started", "completed"] {
                clock.advance(by: 60)  // each step a minute later, so the history orders by time
                let moved = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: near, json: ["status": .string(step)])
                #expect(moved.status == 200 && moved.data?["status"] == .string(step))
            }
            let job = try await s.request(.get, "/api/v1/jobs/\(id)", token: cust)
            #expect(job.data?["status"] == "completed" && job.data?["completed_at"]?.stringValue != nil)
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: near).data?["customer"] == nil)
            #expect(try await s.request(.get, "/api/v1/drivers/me", token: near).data?["total_jobs"] == 1)
            #expect(try await s.request(.get, "/api/v1/notifications", token: cust).data?["total"] == 5)
            // Strangers cannot read it; the customer's list has it.
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("stranger")).status == 404)
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: other).status == 404)
            #expect(try await s.request(.get, "/api/v1/jobs", token: cust).data?["total"] == 1)
            let history = try await s.request(.get, "/api/v1/operators/jobs/\(id)/offers", token: try await s.token("ops", .operator))
            #expect(history.data?["events"]?[5]?["to_status"] == "completed")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func twoHundredConcurrentAcceptsHaveExactlyOneWinner(engine: TestEngine) async throws {
        try await TestServer.run(engine) { s in
            // Profiles straight into the database: the race is what is tested here.
            let now = Date().epochMilliseconds
            try await s.runtime.database.transaction { db in
                for index in 0..<200 {
                    try await db.raw(
                        """
                        INSERT INTO drivers (user_id, name, truck_type, approval_status, online, created_at, updated_at)
                        VALUES (\(bind: "d\(index)"), \(bind: "D\(index)"), 'van', 'approved', 1, \(bind: now), \(bind: now))
                        """
                    ).run()
                }
            }
            let (id, booked) = try await Self.book(s)
            #expect(booked.status == 201)
            var tokens: [String] = []
            for index in 0..<200 { tokens.append(try await s.token("d\(index)", .driver)) }
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for token in tokens {
                    group.addTask {
                        let reply = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: token)
                        return (reply.status, reply.status == 200 ? reply.data?["job"]?["driver_id"]?.stringValue : reply.errorCode)
                    }
                }
                var all: [(Int, String?)] = []
                for try await result in group { all.append(result) }
                return all
            }
            let winners = statuses.filter { $0.0 == 200 }
            #expect(winners.count == 1)
            #expect(statuses.filter { $0.0 == 409 && $0.1 == "JOB_ALREADY_ACCEPTED" }.count == 199)
            let job = try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("cust"))
            #expect(job.data?["driver_id"]?.stringValue == winners.first?.1)
            let assigned = try await s.runtime.database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM job_events WHERE job_id = \(bind: id) AND to_status = 'accepted'").first()?.decode(
                    column: "n", as: Int.self)
            }
            #expect(assigned == 1)
        }
    }

    @Test func offerRoundsSurviveARestart() async throws {
        let config = try await TestServer.config(.sqlite)
        let clock = ManualClock(Date())
        let jobID: String = try await Self.withApp(config, clock) { s in
            try await Self.driver(s, "a", kilometersNorth: 5)
            try await Self.driver(s, "b", kilometersNorth: 40)
            await s.runtime.dispatch.indexSync.flush()
            return try await Self.book(s).id
        }
        clock.advance(by: 125)
        try await Self.withApp(config, clock) { s in
            // The index is rebuilt from the database before the round runs.
            _ = try await s.runtime.dispatch.service.drivers.rebuildIndex()
            try await s.runtime.dispatch.service.offers.runDue()
            let offers = try await Self.offers(s, jobID)
            #expect(Set(offers.keys) == ["a", "b"] && offers["b"]?["round"] == 2)
        }
    }

    static func withApp<T: Sendable>(_ config: HeraldConfig, _ clock: ManualClock, _ body: @Sendable @escaping (TestSession) async throws -> T) async throws
        -> T
    {
        let (application, runtime) = try await HeraldApplication.build(config: config, clock: clock, logger: TestDatabase.logger)
        let issuer = await TokenIssuer(secret: runtime.jwtSecret, config: config.auth, clock: clock)
        return try await application.test(.router) { client in
            try await body(TestSession(client: client, runtime: runtime, issuer: issuer))
        }
    }

    @Test func badInputsAndTheWrongPartyAreRefused() async throws {
        try await TestServer.run(.sqlite) { s in
            let cust = try await s.token("cust")
            let bad = try await s.request(
                .post, "/api/v1/jobs", token: cust, json: ["address": "x", "lat": 95, "lng": -122, "items": [["category": "spaceship", "quantity": -2]]])
            #expect(bad.status == 422 && bad.errorCode == "VALIDATION_FAILED")
            let fields = Set((0..<10).compactMap { bad.json?["error"]?["details"]?["fields"]?[$0]?["field"]?.stringValue })
            #expect(fields == ["lat", "items[0].category", "items[0].quantity"])
            #expect(try await s.request(.get, "/api/v1/jobs", token: cust).data?["total"] == 0)
            // A customer on driver routes, a driver booking.
            let (id, _) = try await Self.book(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: cust).status == 403)
            #expect(try await s.request(.post, "/api/v1/drivers/location", token: cust, json: ["lat": 1, "lng": 1]).status == 403)
            let driverToken = try await Self.driver(s, "dd", kilometersNorth: 3)
            #expect(try await s.request(.post, "/api/v1/jobs", token: driverToken, json: ["address": "x", "volume_estimate": 1]).status == 403)
            #expect(try await s.request(.post, "/api/v1/operators/drivers/dd/approval", token: driverToken, json: ["status": "approved"]).status == 403)
            // Bad coordinates from a driver; an older sequence is ignored.
            let wrong = try await s.request(.post, "/api/v1/drivers/location", token: driverToken, rawBody: #"{"lat": 1e999, "lng": 500}"#)
            #expect(wrong.status == 400 || wrong.status == 422)
            #expect(try await s.request(.post, "/api/v1/drivers/location", token: driverToken, json: ["lat": 1, "lng": 500]).status == 422)
            let stale = try await s.request(.post, "/api/v1/drivers/location", token: driverToken, json: ["lat": 10, "lng": 10, "sequence": 1])
            #expect(stale.status == 200 && stale.data?["accepted"] == false && stale.data?["reason"] == "stale_sequence")
            // Not approved, unknown job, cancelled job.
            let pending = try await Self.driver(s, "pend", kilometersNorth: 3, approve: false)
            let refused = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: pending)
            #expect(refused.status == 403 && refused.errorCode == "DRIVER_NOT_APPROVED")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/job_nope/accept", token: driverToken).errorCode == "JOB_NOT_FOUND")
            let cancelled = try await s.request(.post, "/api/v1/jobs/\(id)/cancel", token: cust, json: ["reason": "changed my mind"])
            #expect(cancelled.status == 200 && cancelled.data?["status"] == "cancelled")
            let late = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: driverToken)
            #expect(late.status == 409 && late.errorCode == "JOB_NOT_AVAILABLE")
            // Another customer cannot cancel (or see) it; a driver profile needs a name.
            #expect(try await s.request(.post, "/api/v1/jobs/\(id)/cancel", token: try await s.token("eve")).status == 404)
            let noName = try await s.request(.put, "/api/v1/drivers/me", token: driverToken, json: ["truck_type": "van", "wings": 2])
            #expect(noName.status == 422)
            // A photo is an https URL the apps load; anything else is refused by name.
            for bad in ["javascript:alert(1)", "http://cdn.example.com/a.jpg", "data:image/png;base64,AAAA", "https://"] {
                let refused = try await s.request(
                    .put, "/api/v1/drivers/me", token: driverToken, json: ["name": "D", "truck_type": "van", "photo_url": .string(bad)])
                #expect(refused.status == 422 && refused.json?["error"]?["details"]?["fields"]?[0]?["field"] == "photo_url", "\(bad)")
            }
            let photo = "https://cdn.example.com/drivers/d1.jpg"
            let withPhoto = try await s.request(
                .put, "/api/v1/drivers/me", token: driverToken, json: ["name": "D", "truck_type": "van", "photo_url": .string(photo)])
            #expect(withPhoto.data?["photo_url"]?.stringValue == photo)
            #expect(try await s.request(.get, "/api/v1/drivers/me", token: driverToken).data?["photo_url"]?.stringValue == photo)
            // A driver without a profile.
            let ghost = try await s.token("ghost", .driver)
            #expect(try await s.request(.post, "/api/v1/drivers/location", token: ghost, json: ["lat": 1, "lng": 1]).errorCode == "DRIVER_NOT_FOUND")
        }
    }

    @Test func positionsAreWrittenBehindAndAJobWithoutCoordinatesGoesToEveryone() async throws {
        try await TestServer.run(.sqlite) { s in
            try await Self.driver(s, "x", kilometersNorth: 5)
            try await Self.driver(s, "y", kilometersNorth: 900)
            // Written by this flush or by the sync service's own, whichever took them first.
            await s.runtime.dispatch.indexSync.flush()
            var stored: Int?
            // (Not thrown: the expectation below names what was there.)
            try? await waitUntil("y's position written", every: .milliseconds(50)) {
                stored = try await s.runtime.database.withConnection { db in
                    try await db.raw("SELECT location_seq FROM drivers WHERE user_id = 'y' AND location_seq IS NOT NULL").first()?
                        .decode(column: "location_seq", as: Int.self)
                }
                return stored != nil
            }
            #expect(stored == 1)
            // Online and approved but no position sent yet: the dispatch design broadcasts to them too.
            try await Self.driver(s, "nopos", kilometersNorth: nil)
            try await Self.driver(s, "offline", kilometersNorth: 2, online: false)
            let (id, booked) = try await Self.book(s, extra: ["lat": .null, "lng": .null])
            #expect(booked.status == 201 && booked.data?["lat"] == .null)
            #expect(Set(try await Self.offers(s, id).keys) == ["x", "y", "nopos"])
        }
    }

    /// A restarted driver app counts its sequence from 1 again under a new `session_id`: the
    /// sample is accepted and written over the old session's higher sequence; within a session
    /// an older one is answered as refused.
    @Test(arguments: TestEngine.allCases)
    func aRestartedAppsSamplesAreAcceptedInItsNewSession(engine: TestEngine) async throws {
        try await TestServer.run(engine) { s in
            let token = try await Self.driver(s, "restart", kilometersNorth: nil)
            func report(_ sequence: Int, _ session: String) async throws -> TestReply {
                try await s.request(
                    .post, "/api/v1/drivers/location", token: token,
                    json: ["lat": 37.78, "lng": -122.41, "sequence": .number(Double(sequence)), "session_id": .string(session)])
            }
            #expect(try await report(900, "launch-1").data?["accepted"] == true)
            await s.runtime.dispatch.indexSync.flush()
            let stale = try await report(1, "launch-1")
            #expect(stale.status == 200 && stale.data?["accepted"] == false && stale.data?["reason"] == "stale_sequence" && stale.data?["last_sequence"] == 900)
            #expect(try await report(1, "launch-2").data?["accepted"] == true)
            // Written by this flush or by the sync service's own, whichever took it first.
            await s.runtime.dispatch.indexSync.flush()
            var stored: (Int64?, String?) = (nil, nil)
            // (Not thrown: the expectation below names what was there.)
            try? await waitUntil("the new session's position written", every: .milliseconds(50)) {
                let row = try await s.runtime.database.withConnection { db in
                    try await db.raw("SELECT location_seq, location_session FROM drivers WHERE user_id = 'restart'").first()
                }
                stored = (try row?.decode(column: "location_seq", as: Int64?.self), try row?.decode(column: "location_session", as: String?.self))
                return stored.1 == "launch-2"
            }
            #expect(stored.0 == 1 && stored.1 == "launch-2")
            #expect(try await report(1, "has space").status == 422)
        }
    }

    /// The `job:status` events stored for a room (every published dispatch event is kept for replay).
    static func statusEvents(_ s: TestSession, room: String, jobID: String) async throws -> [JSONValue] {
        let stored = try await s.runtime.database.withConnection { db in
            try await RealtimeEventStore().events(db, room: room, after: 0, limit: 100)
        }
        return stored.filter { $0.event == "job:status" }.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.payload.utf8)) }
            .filter { $0["job_id"]?.stringValue == jobID }
    }

    /// Every driver whose feed shows a job hears when it leaves the market,
    /// not only the drivers it was offered to (the feed reaches further than the first round).
    @Test(arguments: TestEngine.allCases)
    func everyDriverWhoseFeedShowsAJobHearsWhenItLeaves(engine: TestEngine) async throws {
        try await TestServer.run(engine) { s in
            let near = try await Self.driver(s, "near", kilometersNorth: 5)
            let wide = try await Self.driver(s, "wide", kilometersNorth: 45)  // inside max_radius_km, outside round 1
            let resting = try await Self.driver(s, "resting", kilometersNorth: 3, online: false)
            try await Self.driver(s, "far", kilometersNorth: 80)
            await s.runtime.dispatch.indexSync.flush()
            let (id, _) = try await Self.book(s)
            #expect(Set(try await Self.offers(s, id).keys) == ["near"])
            // Each of them sees the job in the feed (so each must hear that it is gone).
            for token in [near, wide, resting] {
                let feed = try await s.request(.get, "/api/v1/drivers/jobs/available", token: token)
                #expect(feed.status == 200 && feed.data?["jobs"]?[0]?["id"]?.stringValue == id, "\(feed.text)")
            }
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near).status == 200)
            for driver in ["wide", "resting"] {
                let told = try await Self.statusEvents(s, room: "driver:\(driver)", jobID: id)
                #expect(told.count == 1 && told.first?["status"] == "accepted", "\(driver): \(told)")
            }
            #expect(try await Self.statusEvents(s, room: "driver:far", jobID: id).isEmpty)
            #expect(try await Self.statusEvents(s, room: "driver:near", jobID: id).isEmpty)  // the winner follows the job room

            // A job without coordinates is in every feed: when it is cancelled, every driver hears.
            let (open, _) = try await Self.book(s, extra: ["lat": .null, "lng": .null])
            let cancelled = try await s.request(.post, "/api/v1/jobs/\(open)/cancel", token: try await s.token("cust"), json: ["reason": "sorted"])
            #expect(cancelled.status == 200)
            for driver in ["wide", "resting", "far"] {
                let told = try await Self.statusEvents(s, room: "driver:\(driver)", jobID: open)
                #expect(told.count == 1 && told.first?["status"] == "cancelled", "\(driver): \(told)")
            }
        }
    }
}
