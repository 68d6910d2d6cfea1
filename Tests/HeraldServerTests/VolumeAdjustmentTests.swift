import Foundation
import HeraldCore
import HeraldPayments
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime

/// The on-site price adjustment through the real application, on both engines,
/// with the ledger payment provider.
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

    /// The named events stored for a room, oldest first (every dispatch event is kept for replay).
    static func events(_ s: TestSession, _ room: String, _ name: String) async throws -> [JSONValue] {
        try await s.runtime.database.withConnection { db in try await RealtimeEventStore().events(db, room: room, after: 0, limit: 1000) }
            .filter { $0.event == name }.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.payload.utf8)) }
    }

    /// The user's notifications (newest first; with the manual clock many share a time, so
    /// tests look for the one they expect rather than at the first).
    static func notifications(_ s: TestSession, _ token: String) async throws -> [JSONValue] {
        let reply = try await s.request(.get, "/api/v1/notifications?limit=100", token: token)
        return (0..<100).compactMap { reply.data?["notifications"]?[$0] }
    }

    static func notification(_ s: TestSession, _ token: String, title: String) async throws -> JSONValue? {
        try await notifications(s, token).first { $0["title"] == .string(title) }
    }

    static func payment(_ s: TestSession, _ id: String) async throws -> TestReply {
        try await s.request(.get, "/api/v1/operators/jobs/\(id)/payment", token: try await s.token("ops", .operator))
    }

    static func ledger(_ s: TestSession, _ id: String) async throws -> (hold: HoldState?, entries: [String]) {
        let gateway = LedgerGateway(database: s.runtime.database, clock: SystemClock())
        guard let reference = try await s.runtime.dispatch.service.payments.hold(id)?.reference else { return (nil, []) }
        return (try await gateway.hold(reference), try await gateway.entries(reference).map(\.operation).sorted())
    }

    @Test(arguments: TestEngine.allCases)
    func aHigherPriceWaitsForTheCustomerThenTheHoldFollowsTheApproval(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            // The hold was taken at booking.
            let held = try await Self.payment(s, job.id)
            #expect(held.data?["payment"]?["status"] == "authorized" && held.data?["payment"]?["amount_minor"]?.doubleValue == Self.booked)

            let proposed = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5])
            #expect(proposed.status == 201)
            #expect(proposed.data?["adjustment"]?["status"] == "pending" && proposed.data?["adjustment"]?["automatic"] == false)
            #expect(proposed.data?["adjustment"]?["new_price_minor"]?.doubleValue == Self.raised)
            #expect(proposed.data?["adjustment"]?["deadline_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.start.epochMilliseconds + 300_000))
            // Nothing changes before the customer answers; work cannot start.
            #expect(proposed.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.booked)
            let start = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": "started"])
            #expect(start.status == 409 && start.errorCode == "ADJUSTMENT_PENDING")
            let again = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 7])
            #expect(again.status == 409 && again.errorCode == "ADJUSTMENT_ALREADY_MADE")

            // The customer's actionable notification.
            let note = try await Self.notification(s, job.customer, title: "Price Adjustment Required")
            #expect(note?["type"] == "volume_adjustment" && note?["category"] == "VOLUME_ADJUSTMENT")
            #expect(note?["body"] == "Volume increased to 6.5 cu yd. New price: $321.50")
            #expect(note?["data"]?["actions"] == ["APPROVE_VOLUME", "DECLINE_VOLUME"] && note?["data"]?["job_id"] == .string(job.id))

            // Approve: the hold is raised, the job repriced; a double tap answers the same.
            let approved = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(approved.status == 200 && approved.data?["adjustment"]?["status"] == "approved")
            #expect(approved.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.raised && approved.data?["job"]?["volume_estimate"] == 6.5)
            #expect(approved.data?["payment"]?["amount_minor"]?.doubleValue == Self.raised)
            let twice = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(twice.status == 200 && twice.data?["adjustment"]?["decided_at"] == approved.data?["adjustment"]?["decided_at"])
            let opposite = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(opposite.status == 409 && opposite.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            #expect(try await Self.ledger(s, job.id).hold?.authorizedMinor == Int64(Self.raised))
            // The driver was told; now the work goes on, and completion captures the new total.
            #expect(try await Self.notification(s, job.driver, title: "New price approved") != nil)
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": .string(step)]).status == 200)
            }
            let captured = try await Self.payment(s, job.id)
            #expect(captured.data?["payment"]?["status"] == "captured" && captured.data?["payment"]?["captured_minor"]?.doubleValue == Self.raised)
            let ledger = try await Self.ledger(s, job.id)
            #expect(ledger.entries == ["authorize", "capture", "change"] && ledger.hold?.capturedMinor == Int64(Self.raised))
            let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
            #expect(view.data?["adjustment"]?["status"] == "approved" && view.data?["payment"]?["captured_minor"]?.doubleValue == Self.raised)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aDeclineCancelsTheJobAndCapturesOnlyTheTripFee(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": "6.50"]).status == 201)
            let declined = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(declined.status == 200 && declined.data?["adjustment"]?["status"] == "declined" && declined.data?["adjustment"]?["trip_fee_minor"] == 5000)
            #expect(declined.data?["job"]?["status"] == "cancelled" && declined.data?["job"]?["cancelled_by"] == "customer")
            #expect(declined.data?["payment"]?["status"] == "captured" && declined.data?["payment"]?["captured_minor"] == 5000)
            let twice = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/decline", token: job.customer)
            #expect(twice.status == 200 && twice.data?["adjustment"]?["status"] == "declined")
            let opposite = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(opposite.status == 409 && opposite.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            let ledger = try await Self.ledger(s, job.id)
            #expect(ledger.entries == ["authorize", "capture"] && ledger.hold?.capturedMinor == 5000 && ledger.hold?.status == .captured)
            #expect(
                try await Self.notification(s, job.driver, title: "Customer declined the new price")?["body"]
                    == "The job is cancelled; you get the $50.00 trip fee.")
            // The driver cannot move a cancelled job on.
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": "started"]).status == 409)
        }
    }

    /// After a decline the customer may keep the job at its booked
    /// price instead of ending it with the trip fee. One adjustment per job, so the driver
    /// cannot propose again; they are told and may start.
    @Test func aDeclineCanKeepTheJobAtItsOriginalPrice() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
            let path = "/api/v1/jobs/\(job.id)/volume/decline"
            // Bad choices are refused and decide nothing.
            for bad: JSONValue in [["proceed_at_original_price": "yes"], ["proceed_at_original_price": 1], ["proceed": true]] {
                let refused = try await s.request(.post, path, token: job.customer, json: bad)
                #expect(refused.status == 422 && refused.errorCode == "VALIDATION_FAILED", "\(bad)")
            }
            #expect(try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer).data?["adjustment"]?["status"] == "pending")

            let kept = try await s.request(.post, path, token: job.customer, json: ["proceed_at_original_price": true])
            #expect(kept.status == 200, "\(kept.text)")
            #expect(kept.data?["adjustment"]?["status"] == "declined" && kept.data?["adjustment"]?["proceed_at_original_price"] == true)
            #expect(kept.data?["adjustment"]?["trip_fee_minor"] == .null)
            #expect(kept.data?["job"]?["status"] == "arrived" && kept.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.booked)
            #expect(kept.data?["payment"]?["status"] == "authorized" && kept.data?["payment"]?["amount_minor"]?.doubleValue == Self.booked)
            let told = try await Self.events(s, "driver:d1", "volume:declined")
            #expect(told.count == 1 && told.first?["proceed_at_original_price"] == true && told.first?["trip_fee_minor"] == 0)
            #expect(try await Self.notification(s, job.driver, title: "Proceed at the original price") != nil)
            // The same decision again answers the same; the opposite one and a new proposal are refused.
            let again = try await s.request(.post, path, token: job.customer, json: ["proceed_at_original_price": true])
            #expect(again.status == 200 && again.data?["job"]?["status"] == "arrived")
            let approve = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(approve.status == 409 && approve.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
            let second = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 7])
            #expect(second.status == 409 && second.errorCode == "ADJUSTMENT_ALREADY_MADE")
            // The work goes ahead and the booked price is what is taken.
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": .string(step)]).status == 200)
            }
            #expect(try await Self.ledger(s, job.id).hold?.capturedMinor == Int64(Self.booked))
        }
    }

    @Test func aLowerPriceIsApprovedWithoutAsking() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let job = try await Self.arrivedJob(s)
            let lowered = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 2])
            #expect(lowered.status == 201 && lowered.data?["adjustment"]?["status"] == "approved" && lowered.data?["adjustment"]?["automatic"] == true)
            #expect(lowered.data?["job"]?["price"]?["amount_minor"]?.doubleValue == Self.lowered)
            #expect(lowered.data?["payment"]?["amount_minor"]?.doubleValue == Self.lowered)
            #expect(try await Self.notification(s, job.customer, title: "Good news: lower price")?["body"] == "Volume adjusted to 2 cu yd. New price: $164.00")
            let approve = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(approve.status == 409 && approve.errorCode == "NO_PENDING_ADJUSTMENT")
            for step in ["started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": .string(step)]).status == 200)
            }
            #expect(try await Self.ledger(s, job.id).hold?.capturedMinor == Int64(Self.lowered))
        }
    }

    @Test func deadlinesPassOnTheInjectedClockCanBeExtendedAndSurviveARestart() async throws {
        let config = try await TestServer.config(.sqlite)
        let clock = ManualClock(Self.start)
        let job: Arrived = try await DispatchRoutesTests.withApp(config, clock) { s in
            let job = try await Self.arrivedJob(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
            let early = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver)
            #expect(early.status == 409 && early.errorCode == "ADJUSTMENT_NOT_EXPIRED")
            clock.advance(by: 299)
            _ = try await s.runtime.dispatch.service.adjustmentEndings.expireDueProposals()
            #expect(try await Self.notification(s, job.driver, title: "No answer from the customer") == nil)
            return job
        }
        // Restarted: the deadline is in the database.
        clock.advance(by: 2)
        try await DispatchRoutesTests.withApp(config, clock) { s in
            _ = try await s.runtime.dispatch.service.adjustmentEndings.expireDueProposals()
            let told = try await Self.notifications(s, job.driver)
            #expect(told.contains { $0["title"] == "No answer from the customer" })
            let expired = try await Self.events(s, "driver:d1", "volume:expired")
            #expect(expired.count == 1 && expired.first?["job_id"]?.stringValue == job.id)
            let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
            #expect(view.data?["adjustment"]?["expired"] == true && view.data?["adjustment"]?["status"] == "pending")
            // Told once.
            _ = try await s.runtime.dispatch.service.adjustmentEndings.expireDueProposals()
            #expect(try await Self.notifications(s, job.driver).count == told.count)
            #expect(try await Self.events(s, "driver:d1", "volume:expired").count == 1)
            // Two extensions, each five more minutes and a reminder to the customer; then no more.
            for round in 1...2 {
                let extended = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume/extend", token: job.driver)
                #expect(extended.status == 200 && extended.data?["adjustment"]?["extensions"] == .number(Double(round)))
                #expect(extended.data?["adjustment"]?["expired"] == false)
                let reminders = try await Self.notifications(s, job.customer).filter { $0["title"] == "Reminder: Price Adjustment Required" }
                #expect(reminders.count == round)
                // The driver hears of the extension; the customer gets the proposal again.
                #expect(try await Self.events(s, "driver:d1", "volume:extended").count == round)
                let proposed = try await Self.events(s, "user:cust", "volume:proposed")
                #expect(proposed.count == round + 1 && proposed.last?["job_id"]?.stringValue == job.id)
                clock.advance(by: 301)
                _ = try await s.runtime.dispatch.service.adjustmentEndings.expireDueProposals()
            }
            let limit = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume/extend", token: job.driver)
            #expect(limit.status == 409 && limit.errorCode == "EXTENSION_LIMIT_REACHED")
            // The driver ends it and is paid the trip fee.
            let ended = try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver)
            #expect(ended.status == 200 && ended.data?["job"]?["status"] == "cancelled" && ended.data?["job"]?["cancelled_by"] == "driver")
            #expect(ended.data?["payment"]?["captured_minor"] == 5000)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver).status == 200)
            let status = try await Self.events(s, "job:\(job.id)", "job:status")
            #expect(status.last?["status"] == "cancelled" && status.last?["previous_status"] == "arrived")
            let late = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(late.status == 409 && late.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
        }
    }

    /// Approve and decline together, several taps of each: exactly one decision wins, and the
    /// job and the payment agree with it.
    @Test(arguments: TestEngine.allCases)
    func approveAndDeclineRaceToOneConsistentOutcome(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(Self.start)) { s in
            for round in 0..<4 {
                let job = try await Self.arrivedJob(s, customer: "c\(round)", driver: "d\(round)")
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
                let replies = try await withThrowingTaskGroup(of: (String, TestReply).self) { group in
                    for index in 0..<8 {
                        let action = index % 2 == 0 ? "approve" : "decline"
                        group.addTask { (action, try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/\(action)", token: job.customer)) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let winners = Set(replies.filter { $0.1.status == 200 }.map(\.0))
                #expect(winners.count == 1)
                #expect(replies.allSatisfy { $0.1.status == 200 || $0.1.errorCode == "ADJUSTMENT_ALREADY_DECIDED" })
                let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
                let ledger = try await Self.ledger(s, job.id)
                if winners == ["approve"] {
                    #expect(view.data?["status"] == "arrived" && view.data?["price"]?["amount_minor"]?.doubleValue == Self.raised)
                    #expect(ledger.hold?.status == .authorized && ledger.hold?.amountMinor == Int64(Self.raised))
                } else {
                    #expect(view.data?["status"] == "cancelled" && view.data?["price"]?["amount_minor"]?.doubleValue == Self.booked)
                    #expect(ledger.hold?.status == .captured && ledger.hold?.capturedMinor == 5000)
                }
                #expect(view.data?["payment"]?["pending_operation"] == .null)
            }
        }
    }

    /// An operator's cancel (job, then adjustment) racing the customer's approval (which now
    /// also takes the job first): never a deadlock (PostgreSQL answered 500), always one story.
    @Test(arguments: TestEngine.allCases)
    func anOperatorCancelRacingAnApprovalNeverDeadlocks(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(Self.start)) { s in
            let ops = try await s.token("ops", .operator)
            for round in 0..<6 {
                let job = try await Self.arrivedJob(s, customer: "c\(round)", driver: "d\(round)")
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
                async let cancel = s.request(.post, "/api/v1/jobs/\(job.id)/cancel", token: ops, json: ["reason": "site closed"])
                async let approve = s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
                let (cancelled, approved) = try await (cancel, approve)
                #expect(cancelled.status == 200, "\(cancelled.text)")
                #expect(approved.status == 200 || (400..<500).contains(approved.status), "\(approved.text)")
                let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
                #expect(view.data?["status"] == "cancelled")
                #expect(view.data?["adjustment"]?["status"] != nil && view.data?["adjustment"]?["status"] != "pending")
            }
        }
    }

    /// The driver's step to `started` racing their own proposal of a higher price: one wins;
    /// work never starts with a proposal pending (on PostgreSQL under READ COMMITTED the start's
    /// subquery read a snapshot from before the proposal committed).
    @Test(arguments: TestEngine.allCases)
    func startingRacingANewProposalNeverStartsWithAProposalPending(engine: TestEngine) async throws {
        try await TestServer.run(engine, clock: ManualClock(Self.start)) { s in
            for round in 0..<6 {
                let job = try await Self.arrivedJob(s, customer: "c\(round)", driver: "d\(round)")
                async let propose = s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5])
                async let start = s.request(.post, "/api/v1/drivers/jobs/\(job.id)/status", token: job.driver, json: ["status": "started"])
                let (proposed, started) = try await (propose, start)
                #expect((proposed.status == 201) != (started.status == 200), "\(proposed.text) / \(started.text)")
                #expect(proposed.status < 500 && started.status < 500)
                let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
                if started.status == 200 {
                    #expect(view.data?["status"] == "started")
                } else {
                    #expect(view.data?["status"] == "arrived" && started.errorCode == "ADJUSTMENT_PENDING")
                }
            }
        }
    }

    /// The driver's trip-fee cancel racing the customer's late approval: one wins, and the
    /// job and the payment agree.
    @Test(arguments: TestEngine.allCases)
    func theDriversCancelAndALateApprovalRaceToOneOutcome(engine: TestEngine) async throws {
        let clock = ManualClock(Self.start)
        try await TestServer.run(engine, clock: clock) { s in
            for round in 0..<3 {
                let job = try await Self.arrivedJob(s, customer: "c\(round)", driver: "d\(round)")
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(job.id)/volume", token: job.driver, json: ["actual_volume": 6.5]).status == 201)
                clock.advance(by: 301)
                async let cancel = s.request(.post, "/api/v1/drivers/jobs/\(job.id)/cancel-with-trip-fee", token: job.driver)
                async let approve = s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
                let (cancelled, approved) = try await (cancel, approve)
                #expect((cancelled.status == 200) != (approved.status == 200))
                let ledger = try await Self.ledger(s, job.id)
                let view = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
                if approved.status == 200 {
                    #expect(cancelled.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
                    #expect(view.data?["status"] == "arrived" && ledger.hold?.amountMinor == Int64(Self.raised))
                } else {
                    #expect(approved.errorCode == "ADJUSTMENT_ALREADY_DECIDED")
                    #expect(view.data?["status"] == "cancelled" && ledger.hold?.capturedMinor == 5000)
                }
            }
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
            // No proposal yet; another customer's job; a driver deciding; the driver extending nothing.
            let none = try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer)
            #expect(none.status == 409 && none.errorCode == "NO_PENDING_ADJUSTMENT")
            #expect(try await s.request(.post, path, token: job.driver, json: ["actual_volume": 6.5]).status == 201)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: try await s.token("eve")).status == 404)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.driver).status == 403)
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/volume/approve", token: job.customer, json: ["really": true]).status == 422)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(early)/volume/extend", token: other).errorCode == "NO_PENDING_ADJUSTMENT")
            // The customer cannot cancel an arrived job to dodge the trip fee.
            #expect(try await s.request(.post, "/api/v1/jobs/\(job.id)/cancel", token: job.customer).errorCode == "INVALID_TRANSITION")
            // An operator can; the proposal closes and the hold is released.
            let ops = try await s.request(.post, "/api/v1/jobs/\(job.id)/cancel", token: try await s.token("ops", .operator))
            #expect(ops.status == 200)
            let after = try await s.request(.get, "/api/v1/jobs/\(job.id)", token: job.customer)
            #expect(after.data?["adjustment"]?["status"] == "cancelled" && after.data?["payment"]?["status"] == "cancelled")
        }
    }
}
