import Foundation
import HeraldCore
import HeraldPayments
import HeraldServer
import HeraldTestSupport
import Testing

/// Jobs booked past an authorisation's lifetime (payments.authorization_lifetime_hours, 7 days
/// by default) take their hold later — when it still covers the job — through the real
/// application with the ledger provider.
@Suite struct ScheduledHoldTests {
    static let start = VolumeAdjustmentTests.start
    static let day: TimeInterval = 86_400
    /// Ten days ahead: the hold is due 10 d + 24 h − 168 h = 4 days after booking.
    static let scheduled = start.addingTimeInterval(10 * day)
    static let holdAt = start.addingTimeInterval(4 * day)

    static func bookAhead(_ s: TestSession, at date: Date = scheduled) async throws -> (id: String, price: Double) {
        let (id, reply) = try await DispatchRoutesTests.book(s, extra: ["scheduled_at": .string(Timestamp.string(epochMilliseconds: date.epochMilliseconds))])
        #expect(reply.status == 201)
        return (id, try #require(reply.data?["price"]?["amount_minor"]?.doubleValue))
    }

    /// The job's payment as its customer sees it, once `until` holds (the payment scheduler
    /// may get there before the test's own call).
    static func payment(_ s: TestSession, _ id: String, until: @escaping (JSONValue?) -> Bool = { _ in true }) async throws -> JSONValue? {
        var payment: JSONValue?
        // (Not thrown: the caller's expectations name the payment there was.)
        try? await waitUntil("the job's payment", every: .milliseconds(50)) {
            _ = try await s.runtime.dispatch.service.transitions.runDuePayments()
            payment = try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("cust")).data?["payment"]
            return until(payment)
        }
        return payment
    }

    @Test(arguments: TestEngine.allCases)
    func aJobBookedAheadTakesItsHoldWhenItStillCoversTheJob(engine: TestEngine) async throws {
        let clock = ManualClock(Self.start)
        try await TestServer.run(engine, clock: clock) { s in
            let driver = try await DispatchRoutesTests.driver(s, "d1", kilometersNorth: 3)
            let (id, price) = try await Self.bookAhead(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: driver).status == 200)
            // Booked: nothing authorised yet, the hold's time shown.
            let booked = try await Self.payment(s, id)
            #expect(booked?["status"] == "scheduled" && booked?["authorized_minor"] == 0 && booked?["pending_operation"] == "authorize")
            #expect(booked?["hold_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.holdAt.epochMilliseconds))
            #expect(try await VolumeAdjustmentTests.ledger(s, id).hold == nil)

            // A second before its time the scheduler leaves it alone; at its time it takes it.
            clock.advance(by: 4 * Self.day - 1)
            #expect(try await s.runtime.dispatch.service.transitions.runDuePayments() == 0)
            #expect(try await Self.payment(s, id)?["status"] == "scheduled")
            clock.advance(by: 1)
            let taken = try await Self.payment(s, id) { $0?["status"] == "authorized" }
            #expect(taken?["status"] == "authorized" && taken?["authorized_minor"]?.doubleValue == price && taken?["hold_at"] == .null)
            #expect(taken?["pending_operation"] == .null)
            #expect(try await VolumeAdjustmentTests.ledger(s, id).entries == ["authorize"])

            // The job then runs as any other and captures its price (the driver's token is new:
            // the first expired in the four days).
            let fresh = try await s.token("d1", .driver)
            for step in ["en_route", "arrived", "started", "completed"] {
                #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: fresh, json: ["status": .string(step)]).status == 200)
            }
            let captured = try await Self.payment(s, id) { $0?["status"] == "captured" }
            #expect(captured?["status"] == "captured" && captured?["captured_minor"]?.doubleValue == price)
            let events = try await s.runtime.dispatch.service.payments.events(id).map { "\($0.operation):\($0.outcome)" }
            #expect(events.sorted() == ["authorize:ok", "capture:ok"])  // one clock tick: same time
        }
    }

    @Test func aDriverSettingOffBeforeTheHoldsTimeTakesItThenAndACancelBeforeItTakesNothing() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(Self.start)) { s in
            let driver = try await DispatchRoutesTests.driver(s, "d1", kilometersNorth: 3)
            let (early, price) = try await Self.bookAhead(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(early)/accept", token: driver).status == 200)
            #expect(try await Self.payment(s, early)?["status"] == "scheduled")
            let enRoute = try await s.request(.post, "/api/v1/drivers/jobs/\(early)/status", token: driver, json: ["status": "en_route"])
            #expect(enRoute.status == 200 && enRoute.data?["status"] == "en_route")
            let taken = try await Self.payment(s, early)
            #expect(taken?["status"] == "authorized" && taken?["authorized_minor"]?.doubleValue == price)

            // Cancelled before its time: released without a provider call, and never taken later.
            let (cancelled, _) = try await Self.bookAhead(s, at: Self.scheduled.addingTimeInterval(Self.day))
            let reply = try await s.request(.post, "/api/v1/jobs/\(cancelled)/cancel", token: try await s.token("cust"))
            #expect(reply.status == 200 && reply.data?["status"] == "cancelled")
            let released = try await Self.payment(s, cancelled) { $0?["status"] == "cancelled" }
            #expect(released?["status"] == "cancelled" && released?["pending_operation"] == .null && released?["authorized_minor"] == 0)
            #expect(try await s.runtime.dispatch.service.payments.events(cancelled).isEmpty)
            #expect(try await VolumeAdjustmentTests.ledger(s, cancelled).hold == nil)

            // A job within the lifetime is held at booking, as before.
            let (soon, _) = try await Self.bookAhead(s, at: Self.start.addingTimeInterval(5 * Self.day))
            #expect(try await Self.payment(s, soon)?["status"] == "authorized")
        }
    }
}
