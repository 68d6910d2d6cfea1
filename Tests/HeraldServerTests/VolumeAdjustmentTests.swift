import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

/// The price adjustment's routes through the real application: each route's status codes,
/// error codes and JSON (the job, the adjustment, the payment), who may call which, and the
/// request's validation. The flows themselves (prices, the hold, notifications, events,
/// deadlines, races) are dispatch's `AdjustmentFlowTests`.
@Suite struct VolumeAdjustmentTests {
    /// 2027-01-15 08:00 UTC, a Friday morning: no weekend or after-hours surcharge, so the
    /// booking (4 yd³ + furniture) is 4900 + 4 × 3500 + 4500 = 23400.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let booked: Double = 23_400
    /// 6.5 yd³: 4900 + 22750 + 4500.
    static let raised: Double = 32_150
    /// 2 yd³: 4900 + 7000 + 4500.
    static let lowered: Double = 16_400

    struct Arrived {
        var id: String
        var driver: String
        var customer: String
    }

    /// A job booked by `customer`, accepted by `driver` and at the `arrived` step.
    static func arrivedJob(_ s: TestSession, customer: String = "cust", driver: String = "d1") async throws -> Arrived {
        let driverToken = try await DispatchRoutesTests.driver(s, driver, kilometersNorth: 3)
        let (id, reply) = try await DispatchRoutesTests.book(s, customer)
        #expect(reply.status == 201 && reply.data?["price"]?["amount_minor"]?.doubleValue == booked)
        #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: driverToken).status == 200)
        for step in ["en_route", "arrived"] {
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: driverToken, json: ["status": .string(step)]).status == 200)
        }
        return Arrived(id: id, driver: driverToken, customer: try await s.token(customer))
    }

    static func payment(_ s: TestSession, _ id: String) async throws -> TestReply {
        try await s.request(.get, "/api/v1/operators/jobs/\(id)/payment", token: try await s.token("ops", .operator))
    }

    /// Propose (201) and approve (200) answer the job, the adjustment and the payment; a repeat
    /// answers the same, the opposite decision and a blocked step are 409s with their codes; a
    /// lower price is approved in the proposal's answer. The job view and the operators' payment
    /// view carry the adjustment and the hold.
    @Test func proposeAndApproveAnswerTheJobTheAdjustmentAndThePayment() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            let held = try await Self.payment(s, job.id)
            #expect(held.data?["payment"]?["status"] == "authorized" && held.data?["payment"]?["amount_minor"]?.doubleValue == Self.booked)

            let proposed = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5])
            #expect(proposed.status == 201)
            #expect(proposed.data?["adjustment"]?["status"] == "pending" && proposed.data?["adjustment"]?["automatic"] == false)
            #expect(proposed.data?["adjustment"]?["new_price_minor"]?.doubleValue == Self.raised)
            #expect(proposed.data?["adjustment"]?["deadline_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.start.epochMilliseconds + 300_000))
            #expect(proposed.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.booked)
            let start = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": "started"])
            #expect(start.status == 409 && start.errorCode == "ADJUSTMENT_PENDING")
            let again = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 7])
            #expect(again.status == 409 && again.errorCode == "ADJUSTMENT_ALREADY_MADE")

            let approved = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(approved.status == 200 && approved.data?["adjustment"]?["status"] == "approved")
            #expect(approved.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.raised && approved.data?["job"]?["volume_estimate"] == 6.5)
            #expect(approved.data?["payment"]?["amount_minor"]?.doubleValue == Self.raised)
            let twice = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(twice.status == 200 && twice.data?["adjustment"]?["decided_at"] == approved.data?["adjustment"]?["decided_at"])
            let opposite = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(opposite.status == 409 && opposite.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": .string(step)]).status == 200)
            }
            let captured = try await Self.payment(s, job.id)
            #expect(captured.data?["payment"]?["status"] == "captured" && captured.data?["payment"]?["captured_minor"]?.doubleValue == Self.raised)
            let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
            #expect(view.data?["adjustment"]?["status"] == "approved" && view.data?["payment"]?["captured_minor"]?.doubleValue == Self.raised)

            // Not higher: approved in the proposal's answer, so there is nothing left to approve.
            let other = try await Self.arrivedJob(s, customer: "cust2", driver: "d2")
            let lowered = try await s.request(.post, "/api/v1/drivers/jobs/\(other.id)/volume", token: other.driver, json: ["actual_volume": 2])
            #expect(lowered.status == 201 && lowered.data?["adjustment"]?["status"] == "approved" && lowered.data?["adjustment"]?["automatic"] == true)
            #expect(lowered.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.lowered)
            #expect(lowered.data?["payment"]?["amount_minor"]?.doubleValue == Self.lowered)
            let nothing = try await s.request(.post, "/api/v1/jobs/\(other.id)/volume/approve", token: other.customer)
            #expect(nothing.status == 409 && nothing.errorCode == "NO_PENDING_ADJUSTMENT")
        }
    }

    /// Decline's two outcomes as JSON (no body: cancelled with the trip fee; with
    /// `proceed_at_original_price`: kept at its price), its validation, and its repeats.
    @Test func declineAnswersWithTheTripFeeOrKeepsTheJob() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            // A volume as a decimal string is accepted.
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": "6.50"]).status == 201)
            let declined = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(declined.status == 200 && declined.data?["adjustment"]?["status"] == "declined" && declined.data?["adjustment"]?["trip_fee_minor"] == 5000)
            #expect(declined.data?["job"]?["status"] == "cancelled" && declined.data?["job"]?["cancelled_by"] == "customer")
            #expect(declined.data?["payment"]?["status"] == "captured" && declined.data?["payment"]?["captured_minor"] == 5000)
            let twice = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(twice.status == 200 && twice.data?["adjustment"]?["status"] == "declined")
            let opposite = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(opposite.status == 409 && opposite.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": "started"]).status == 409)

            let kept = try await Self.arrivedJob(s, customer: "cust2", driver: "d2")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(kept.id)/volume", token: kept.driver, json: ["actual_volume": 6.5]).status == 201)
            let path = "/api/v1/jobs/\(kept.id)/volume/decline"
            // Bad choices are refused and decide nothing.
            for bad: JSONValue in [["proceed_at_original_price": "yes"], ["proceed_at_original_price": 1], ["proceed": true]] {
                let refused = try await s.request(.post, path, token: kept.customer, json: bad)
                #expect(refused.status == 422 && refused.errorCode == "VALIDATION_FAILED", "\(bad)")
            }
            #expect(try await s.request(.get, "/api/v1/jobs/\(kept.id)", token: kept.customer).data?["adjustment"]?["status"] == "pending")
            let proceed = try await s.request(.post, path, token: kept.customer, json: ["proceed_at_original_price": true])
            #expect(proceed.status == 200, "\(proceed.text)")
            #expect(proceed.data?["adjustment"]?["status"] == "declined" && proceed.data?["adjustment"]?["proceed_at_original_price"] == true)
            #expect(proceed.data?["adjustment"]?["trip_fee_minor"] == .null)
            #expect(proceed.data?["job"]?["status"] == "arrived" && proceed.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.booked)
            #expect(proceed.data?["payment"]?["status"] == "authorized" && proceed.data?["payment"]?["amount_minor"]?.doubleValue == Self.booked)
            let again = try await s.request(.post, path, token: kept.customer, json: ["proceed_at_original_price": true])
            #expect(again.status == 200 && again.data?["job"]?["status"] == "arrived")
            let approve = try await s.request(.post, "/api/v1/jobs/\(kept.id)/volume/approve", token: kept.customer)
            #expect(approve.status == 409 && approve.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            let second = try await s.request(.post, "/api/v1/drivers/jobs/\(kept.id)/volume", token: kept.driver, json: ["actual_volume": 7])
            #expect(second.status == 409 && second.errorCode == "ADJUSTMENT_ALREADY_MADE")
        }
    }

    /// The driver's deadline routes: `expired` as the job view computes it from the clock,
    /// extend (200, then EXTENSION_LIMIT_REACHED) and the trip-fee cancel (409 before the
    /// deadline, 200 after and on a repeat).
    @Test func extendAndTheTripFeeCancelAnswerByTheDeadline() async throws {
        let clock = ManualClock(Self.start)
        try await TestServer.run(.sqlite, clock: clock) { s in
            let job = try await Self.arrivedJob(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
            let early = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver)
            #expect(early.status == 409 && early.errorCode == "ADJUSTMENT_NOT_EXPIRED")
            clock.advance(by: 301)
            let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
            #expect(view.data?["adjustment"]?["expired"] == true && view.data?["adjustment"]?["status"] == "pending")
            for round in 1...2 {
                let extended = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume/extend", token: job.driver)
                #expect(extended.status == 200 && extended.data?["adjustment"]?["extensions"] == .number(Double(round)))
                #expect(extended.data?["adjustment"]?["expired"] == false)
                clock.advance(by: 301)
            }
            let limit = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume/extend", token: job.driver)
            #expect(limit.status == 409 && limit.errorCode == "EXTENSION_LIMIT_REACHED")
            let ended = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver)
            #expect(ended.status == 200 && ended.data?["job"]?["status"] == "cancelled" && ended.data?["job"]?["cancelled_by"] == "driver")
            #expect(ended.data?["payment"]?["captured_minor"] == 5000)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver).status == 200)
            let late = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(late.status == 409 && late.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
        }
    }

    @Test func badVolumesTheWrongPartiesAndTheWrongStepsAreRefused() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            let path = "/api/v1/drivers/jobs/\(job.id)/volume"
            for bad: JSONValue in [0, -1, 4.555, 31, "abc", "4.555", "1e2", true, .null, ["yards": 4]] {
                let reply = try await s.request(.post, path, token: job.driver, json: ["actual_volume": bad])
                #expect(reply.status == 422 && reply.errorCode == "VALIDATION_FAILED", "actual_volume \(bad)")
                #expect(reply.json?["error"]?["details"]?["fields"]?[0]?["field"] == "actual_volume")
            }
            #expect(try await s.request(.post, path, token: job.driver, json: [:]).status == 422)
            #expect(try await s.request(.post, path, token: job.driver, json: ["actual_volume": 5, "price": 1]).status == 422)
            // Nothing was recorded by the refusals.
            #expect(try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer).data?["adjustment"] == .null)
            // Another driver, a customer, an unknown job.
            let other = try await DispatchRoutesTests.driver(s, "other", kilometersNorth: 4)
            #expect(try await s.request(.post, path, token: other, json: ["actual_volume": 5]).errorCode == "JOB_NOT_FOUND")
            #expect(try await s.request(.post, path, token: job.customer, json: ["actual_volume": 5]).status == 403)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/job_nope/volume", token: job.driver, json: ["actual_volume": 5]).status == 404)
            // Not arrived yet.
            let (early, _) = try await DispatchRoutesTests.book(s, "cust2")
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(early)/accept", token: other).status == 200)
            let notYet = try await s.request(.post, "/api/v1/drivers/jobs/\(early)/volume", token: other, json: ["actual_volume": 5])
            #expect(notYet.status == 409 && notYet.errorCode == "JOB_NOT_ARRIVED")
            // No proposal yet; another customer's job; a driver deciding; a body on approve; the driver extending nothing.
            let none = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(none.status == 409 && none.errorCode == "NO_PENDING_ADJUSTMENT")
            #expect(try await s.request(.post, path, token: job.driver, json: ["actual_volume": 6.5]).status == 201)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: try await s.token("eve")).status == 404)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.driver).status == 403)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer, json: ["really": true]).status == 422)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(early)/volume/extend", token: other).errorCode == "NO_PENDING_ADJUSTMENT")
        }
    }
}
