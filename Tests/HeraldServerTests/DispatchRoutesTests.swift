import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import SQLKit
import Testing

/// Dispatch's routes through the real application: status codes, error codes and messages, the
/// JSON the apps read, and who may call which route. The flows themselves (offer rounds, claims,
/// steps, positions, feeds) are dispatch's `JobFlowTests`, `DriverFlowTests` and `JobFeedTests`.
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

    /// The apps follow a job only through these answers; what happens in it (who is offered, told, paid) is dispatch's `JobFlowTests`.
    @Test(arguments: TestEngine.allCases)
    func bookOfferClaimAndFollowTheJobToCompletion(engine: TestEngine) async throws {
        // A Wednesday afternoon in the pricing time zone (UTC): no weekend or after-hours surcharge.
        let clock = ManualClock(try #require(Timestamp.parse("2026-11-25T14:00:00Z")))
        try await TestServer.run(engine, clock: clock) { s in
            let near = try await Self.driver(s, "near", kilometersNorth: 5)
            let other = try await Self.driver(s, "other", kilometersNorth: 12)
            let (id, booked) = try await Self.book(s)
            #expect(booked.status == 201)
            #expect(booked.data?["status"] == "pending" && booked.data?["offer_round"] == 1)
            #expect(booked.data?["price"]?["amount_minor"] == 23_400)
            // The feed lists the job.
            let feed = try await s.request(.get, "/api/v1/drivers/jobs/available", token: near)
            #expect(feed.data?["jobs"]?[0]?["id"]?.stringValue == id)
            // Claim: the winner gets 200 (again on a repeat), the other 409 with the dispatch design's message.
            let won = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near)
            #expect(won.status == 200 && won.data?["job"]?["status"] == "accepted" && won.data?["job"]?["driver"]?["name"] == "Driver near")
            let lost = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: other)
            #expect(lost.status == 409 && lost.errorCode == "JOB_ALREADY_ACCEPTED")
            #expect(lost.json?["error"]?["message"] == "Job already accepted by another driver")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: near).status == 200)
            #expect(try await s.request(.get, "/api/v1/drivers/jobs/available", token: other).data?["count"] == 0)
            // The operators' view of an offer.
            let offers = try await Self.offers(s, id)
            #expect(offers["near"]?["round"] == 1 && (offers["near"]?["distance_m"]?.doubleValue ?? 0) > 4_900)
            #expect(offers["near"]?["channel"] == "inbox" && offers["near"]?["outcome"] == "won")  // no socket, no device registered
            // The assigned driver's view of the job carries the customer's contact (`PUT /me` sets it).
            let cust = try await s.token("cust")
            let phone = try await s.request(.put, "/api/v1/me", token: cust, json: ["phone": "+14155550123", "display_name": "Casey"])
            #expect(phone.status == 200 && phone.data?["phone"] == "+14155550123")
            #expect(try await s.request(.put, "/api/v1/me", token: cust, json: ["phone": "0415 555 012"]).status == 422)
            let driverView = try await s.request(.get, "/api/v1/jobs/\(id)", token: near)
            #expect(driverView.data?["customer"] == ["id": "cust", "name": "Casey", "phone": "+14155550123"])
            // Steps: out of order is a 409 naming the allowed ones; another driver's is a 404.
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
            #expect(try await s.request(.get, "/api/v1/drivers/me", token: near).data?["total_jobs"] == 1)
            // Strangers cannot read it; the customer's list has it; the operators' history lists each change.
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("stranger")).status == 404)
            #expect(try await s.request(.get, "/api/v1/jobs/\(id)", token: other).status == 404)
            #expect(try await s.request(.get, "/api/v1/jobs", token: cust).data?["total"] == 1)
            let history = try await s.request(.get, "/api/v1/operators/jobs/\(id)/offers", token: try await s.token("ops", .operator))
            #expect(history.data?["events"]?[5]?["to_status"] == "completed")
        }
    }

    /// The race's HTTP answers: one 200 naming the driver the job now has, and a 409 for everyone else (the claim itself is `JobFlowTests`).
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

    /// The location route's answers as the driver apps read them; what the samples do is dispatch's `DriverFlowTests`.
    @Test func aStaleSampleIsAnsweredWithTheLastSequence() async throws {
        try await TestServer.run(.sqlite) { s in
            let token = try await Self.driver(s, "restart", kilometersNorth: nil)
            func report(_ sequence: Int, _ session: String) async throws -> TestReply {
                try await s.request(
                    .post, "/api/v1/drivers/location", token: token,
                    json: ["lat": 37.78, "lng": -122.41, "sequence": .number(Double(sequence)), "session_id": .string(session)])
            }
            #expect(try await report(900, "launch-1").data?["accepted"] == true)
            let stale = try await report(1, "launch-1")
            #expect(stale.status == 200 && stale.data?["accepted"] == false && stale.data?["reason"] == "stale_sequence")
            #expect(stale.data?["last_sequence"] == 900)
            #expect(try await report(1, "has space").status == 422)
        }
    }
}
