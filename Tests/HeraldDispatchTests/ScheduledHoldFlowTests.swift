import Foundation
import HeraldAuth
import HeraldCore
import HeraldPayments
import HeraldTestSupport
import Testing

@testable import HeraldDispatch

/// Jobs booked past an authorisation's lifetime (payments.authorization_lifetime_hours, 7 days
/// by default) take their hold later, when it still covers the job: through dispatch's owners
/// with the ledger provider, the payment scheduler's pass called by hand. How the job view
/// shows a scheduled hold stays in the server's `ScheduledHoldTests`.
@Suite struct ScheduledHoldFlowTests {
    static let start = AdjustmentFlowTests.start
    static let day: TimeInterval = 86_400
    /// Ten days ahead: the hold is due 10 d + 24 h − 168 h = 4 days after booking.
    static let scheduled = start.addingTimeInterval(10 * day)
    static let holdAt = start.addingTimeInterval(4 * day)

    @Test(arguments: TestEngine.allCases)
    func aJobBookedAheadTakesItsHoldWhenItStillCoversTheJob(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            try await h.driver("d1", kilometersNorth: 3)
            let job = try await h.book(scheduledAt: Self.scheduled)
            _ = try await h.dispatch.claims.accept(job.id, driverID: "d1")
            // Booked: nothing authorised yet, the hold's time kept.
            let booked = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(booked.status == .scheduled && booked.authorizedMinor == 0 && booked.pendingOp == "authorize")
            #expect(booked.nextAttemptAt == Self.holdAt.epochMilliseconds)
            #expect(try await h.ledger(job.id).hold == nil)

            // A second before its time the scheduler leaves it alone; at its time it takes it.
            h.clock.advance(by: 4 * Self.day - 1)
            #expect(try await h.dispatch.transitions.runDuePayments() == 0)
            #expect(try await h.dispatch.payments.hold(job.id)?.status == .scheduled)
            h.clock.advance(by: 1)
            #expect(try await h.dispatch.transitions.runDuePayments() == 1)
            let taken = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(taken.status == .authorized && taken.authorizedMinor == job.priceMinor && taken.pendingOp == nil)
            #expect(try await h.ledger(job.id).entries == ["authorize"])

            // The job then runs as any other and captures its price.
            for step in ["en_route", "arrived", "started", "completed"] {
                #expect(try await h.dispatch.steps.advance(job.id, driverID: "d1", to: step).status.rawValue == step)
            }
            let captured = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(captured.status == .captured && captured.capturedMinor == job.priceMinor)
            let events = try await h.dispatch.payments.events(job.id).map { "\($0.operation):\($0.outcome)" }
            #expect(events.sorted() == ["authorize:ok", "capture:ok"])  // one clock tick: same time
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aDriverSettingOffBeforeTheHoldsTimeTakesItThenAndACancelBeforeItTakesNothing(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            try await h.driver("d1", kilometersNorth: 3)
            let early = try await h.book(scheduledAt: Self.scheduled)
            _ = try await h.dispatch.claims.accept(early.id, driverID: "d1")
            #expect(try await h.dispatch.payments.hold(early.id)?.status == .scheduled)
            #expect(try await h.dispatch.steps.advance(early.id, driverID: "d1", to: "en_route").status == .enRoute)
            let taken = try #require(try await h.dispatch.payments.hold(early.id))
            #expect(taken.status == .authorized && taken.authorizedMinor == early.priceMinor)

            // Cancelled before its time: released without a provider call, and never taken later.
            let cancelled = try await h.book(scheduledAt: Self.scheduled.addingTimeInterval(Self.day))
            let customer = Identity(userID: "cust", role: .customer, expiresAt: .infinity)
            #expect(try await h.dispatch.steps.cancel(cancelled.id, by: customer, reason: nil).status == .cancelled)
            let released = try #require(try await h.dispatch.payments.hold(cancelled.id))
            #expect(released.status == .cancelled && released.pendingOp == nil && released.authorizedMinor == 0)
            #expect(try await h.dispatch.payments.events(cancelled.id).isEmpty)
            #expect(try await h.ledger(cancelled.id).hold == nil)

            // A job within the lifetime is held at booking, as before.
            let soon = try await h.book(scheduledAt: Self.start.addingTimeInterval(5 * Self.day))
            #expect(try await h.dispatch.payments.hold(soon.id)?.status == .authorized)

            // Past the cancelled job's hold time the scheduler still has nothing to take.
            h.clock.advance(by: 6 * Self.day)
            _ = try await h.dispatch.transitions.runDuePayments()
            #expect(try await h.dispatch.payments.events(cancelled.id).isEmpty)
            #expect(try await h.ledger(cancelled.id).hold == nil)
        }
    }
}
