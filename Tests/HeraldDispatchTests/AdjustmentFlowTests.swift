import Foundation
import HeraldAuth
import HeraldCore
import HeraldPayments
import HeraldTestSupport
import Testing

@testable import HeraldDispatch

/// The on-site price adjustment through dispatch's owners on both engines, with the ledger
/// provider: prices, the hold, the notifications and events, deadlines and the races between
/// the parties' answers. The routes' own concerns (status codes, JSON, who may call which
/// route, request validation) stay in the server's `VolumeAdjustmentTests`.
@Suite struct AdjustmentFlowTests {
    /// 2027-01-15 08:00 UTC, a Friday morning: no weekend or after-hours surcharge, so the
    /// booking (4 yd³ + furniture) is 4900 + 4 × 3500 + 4500 = 23400.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let booked: Int64 = 23_400
    /// 6.5 yd³: 4900 + 22750 + 4500.
    static let raised: Int64 = 32_150
    /// 2 yd³: 4900 + 7000 + 4500.
    static let lowered: Int64 = 16_400
    static let customer = Identity(userID: "cust", role: .customer, expiresAt: .infinity)
    static let ops = Identity(userID: "ops", role: .operator, expiresAt: .infinity)

    @Test(arguments: TestEngine.allCases)
    func aHigherPriceWaitsForTheCustomerThenTheHoldFollowsTheApproval(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            let job = try await h.arrivedJob()
            #expect(job.priceMinor == Self.booked)
            // The hold was taken at booking.
            let held = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(held.status == .authorized && held.amountMinor == Self.booked)

            let proposed = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 650)
            #expect(proposed.adjustment.status == .pending && proposed.adjustment.automatic == 0)
            #expect(proposed.adjustment.newPriceMinor == Self.raised)
            #expect(proposed.adjustment.deadlineAt == Self.start.epochMilliseconds + 300_000)
            // Nothing changes before the customer answers; work cannot start.
            #expect(proposed.job.priceMinor == Self.booked)
            await #expect(throws: DispatchError.adjustmentPending) { try await h.dispatch.steps.advance(job.id, driverID: "d1", to: "started") }
            let pending = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.alreadyMade(pending)) {
                try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 700)
            }

            // The customer's actionable notification.
            let note = try #require(try await h.notification("cust", title: "Price Adjustment Required"))
            #expect(note.type == "volume_adjustment" && note.category == "VOLUME_ADJUSTMENT")
            #expect(note.body == "Volume increased to 6.5 cu yd. New price: $321.50")
            let data = try JSONDecoder().decode(JSONValue.self, from: Data(note.data.utf8))
            #expect(data["actions"] == ["APPROVE_VOLUME", "DECLINE_VOLUME"] && data["job_id"] == .string(job.id))

            // Approve: the hold is raised, the job repriced; a double tap answers the same.
            let approved = try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust")
            #expect(approved.adjustment.status == .approved)
            #expect(approved.job.priceMinor == Self.raised && approved.job.volumeHundredths == 650)
            #expect(approved.hold?.amountMinor == Self.raised)
            let twice = try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust")
            #expect(twice.adjustment.decidedAt == approved.adjustment.decidedAt)
            let decided = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.alreadyDecided(decided)) {
                try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: "cust")
            }
            #expect(try await h.ledger(job.id).hold?.authorizedMinor == Self.raised)
            // The driver was told; now the work goes on, and completion captures the new total.
            #expect(try await h.notification("d1", title: "New price approved") != nil)
            for step in ["started", "completed"] {
                #expect(try await h.dispatch.steps.advance(job.id, driverID: "d1", to: step).status.rawValue == step)
            }
            let captured = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(captured.status == .captured && captured.capturedMinor == Self.raised)
            let ledger = try await h.ledger(job.id)
            #expect(ledger.entries == ["authorize", "capture", "change"] && ledger.hold?.capturedMinor == Self.raised)
            let view = try await h.dispatch.adjustments.adjustmentAndHold(job.id)
            #expect(view.adjustment?.status == .approved && view.hold?.capturedMinor == Self.raised)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aDeclineCancelsTheJobAndCapturesOnlyTheTripFee(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            let job = try await h.arrivedJob()
            _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 650)
            let declined = try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: "cust")
            #expect(declined.adjustment.status == .declined && declined.adjustment.tripFeeMinor == 5000)
            #expect(declined.job.status == .cancelled && declined.job.cancelledBy == "customer")
            #expect(declined.hold?.status == .captured && declined.hold?.capturedMinor == 5000)
            let twice = try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: "cust")
            #expect(twice.adjustment.status == .declined)
            let decided = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.alreadyDecided(decided)) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust") }
            let ledger = try await h.ledger(job.id)
            #expect(ledger.entries == ["authorize", "capture"] && ledger.hold?.capturedMinor == 5000 && ledger.hold?.status == .captured)
            #expect(
                try await h.notification("d1", title: "Customer declined the new price")?.body == "The job is cancelled; you get the $50.00 trip fee.")
            // The driver cannot move a cancelled job on.
            await #expect(throws: DispatchError.invalidTransition(from: .cancelled, to: "started", allowed: [])) {
                try await h.dispatch.steps.advance(job.id, driverID: "d1", to: "started")
            }
        }
    }

    /// After a decline the customer may keep the job at its booked price instead of ending it
    /// with the trip fee. One adjustment per job, so the driver cannot propose again; they are
    /// told and may start.
    @Test(arguments: TestEngine.allCases)
    func aDeclineCanKeepTheJobAtItsOriginalPrice(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            let job = try await h.arrivedJob()
            _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 650)
            let kept = try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: "cust", proceed: true)
            // Declined without a trip fee: the decline that kept the job.
            #expect(kept.adjustment.status == .declined && kept.adjustment.tripFeeMinor == nil)
            #expect(kept.job.status == .arrived && kept.job.priceMinor == Self.booked)
            #expect(kept.hold?.status == .authorized && kept.hold?.amountMinor == Self.booked)
            let told = try await h.events(room: "driver:d1", named: "volume:declined")
            #expect(told.count == 1 && told.first?["proceed_at_original_price"] == true && told.first?["trip_fee_minor"] == 0)
            #expect(try await h.notification("d1", title: "Proceed at the original price") != nil)
            // The same decision again answers the same; the opposite one and a new proposal are refused.
            #expect(try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: "cust", proceed: true).job.status == .arrived)
            let decided = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.alreadyDecided(decided)) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust") }
            await #expect(throws: DispatchError.alreadyMade(decided)) {
                try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 700)
            }
            // The work goes ahead and the booked price is what is taken.
            for step in ["started", "completed"] {
                #expect(try await h.dispatch.steps.advance(job.id, driverID: "d1", to: step).status.rawValue == step)
            }
            #expect(try await h.ledger(job.id).hold?.capturedMinor == Self.booked)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aLowerPriceIsApprovedWithoutAsking(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            let job = try await h.arrivedJob()
            let lowered = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 200)
            #expect(lowered.adjustment.status == .approved && lowered.adjustment.automatic == 1)
            #expect(lowered.job.priceMinor == Self.lowered)
            #expect(lowered.hold?.amountMinor == Self.lowered)
            #expect(try await h.notification("cust", title: "Good news: lower price")?.body == "Volume adjusted to 2 cu yd. New price: $164.00")
            await #expect(throws: DispatchError.noPendingAdjustment) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust") }
            for step in ["started", "completed"] {
                #expect(try await h.dispatch.steps.advance(job.id, driverID: "d1", to: step).status.rawValue == step)
            }
            #expect(try await h.ledger(job.id).hold?.capturedMinor == Self.lowered)
        }
    }

    /// The deadline is kept in the database: a dispatch built again on it (a restart) tells
    /// the driver once, extensions push it back and remind the customer, then the driver leaves
    /// with the trip fee.
    @Test(arguments: TestEngine.allCases)
    func deadlinesPassOnTheInjectedClockCanBeExtendedAndSurviveARestart(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let clock = ManualClock(Self.start)
            let before = DispatchHarness(database: database, clock: clock)
            let job = try await before.arrivedJob()
            _ = try await before.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 650)
            let pending = try #require(try await before.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.notExpired(pending)) {
                try await before.dispatch.adjustmentEndings.cancelWithTripFee(job.id, driverID: "d1")
            }
            clock.advance(by: 299)
            _ = try await before.dispatch.adjustmentEndings.expireDueProposals()
            #expect(try await before.notification("d1", title: "No answer from the customer") == nil)

            // Restarted: the deadline is in the database.
            clock.advance(by: 2)
            let h = DispatchHarness(database: database, clock: clock)
            _ = try await h.dispatch.adjustmentEndings.expireDueProposals()
            let told = try await h.notifications("d1")
            #expect(told.contains { $0.title == "No answer from the customer" })
            let expired = try await h.events(room: "driver:d1", named: "volume:expired")
            #expect(expired.count == 1 && expired.first?["job_id"]?.stringValue == job.id)
            // Expired (pending past its deadline), and still waiting for an answer.
            let late = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            #expect(late.status == .pending && late.expiredAt != nil && (late.deadlineAt ?? .max) <= clock.now().epochMilliseconds)
            // Told once.
            _ = try await h.dispatch.adjustmentEndings.expireDueProposals()
            #expect(try await h.notifications("d1").count == told.count)
            #expect(try await h.events(room: "driver:d1", named: "volume:expired").count == 1)
            // Two extensions, each five more minutes and a reminder to the customer; then no more.
            for round in 1...2 {
                let extended = try await h.dispatch.adjustmentEndings.extendProposal(job.id, driverID: "d1")
                #expect(extended.adjustment.extensions == round)
                #expect(extended.adjustment.expiredAt == nil && (extended.adjustment.deadlineAt ?? 0) > clock.now().epochMilliseconds)
                let reminders = try await h.notifications("cust").filter { $0.title == "Reminder: Price Adjustment Required" }
                #expect(reminders.count == round)
                // The driver hears of the extension; the customer gets the proposal again.
                #expect(try await h.events(room: "driver:d1", named: "volume:extended").count == round)
                let proposed = try await h.events(room: "user:cust", named: "volume:proposed")
                #expect(proposed.count == round + 1 && proposed.last?["job_id"]?.stringValue == job.id)
                clock.advance(by: 301)
                _ = try await h.dispatch.adjustmentEndings.expireDueProposals()
            }
            await #expect(throws: DispatchError.extensionLimit(2)) { try await h.dispatch.adjustmentEndings.extendProposal(job.id, driverID: "d1") }
            // The driver ends it and is paid the trip fee.
            let ended = try await h.dispatch.adjustmentEndings.cancelWithTripFee(job.id, driverID: "d1")
            #expect(ended.job.status == .cancelled && ended.job.cancelledBy == "driver")
            #expect(ended.hold?.capturedMinor == 5000)
            #expect(try await h.dispatch.adjustmentEndings.cancelWithTripFee(job.id, driverID: "d1").job.status == .cancelled)
            let status = try await h.statusEvents(room: "job:\(job.id)", jobID: job.id)
            #expect(status.last?["status"] == "cancelled" && status.last?["previous_status"] == "arrived")
            let decided = try #require(try await h.dispatch.adjustments.adjustment(job.id))
            await #expect(throws: DispatchError.alreadyDecided(decided)) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust") }
        }
    }

    /// Refusals that depend on the job and its adjustment, not on the request: someone else's
    /// job, a job not at the door yet, nothing to decide or extend, a cancel to dodge the trip
    /// fee. An operator's cancel closes the proposal and releases the hold.
    @Test(arguments: TestEngine.allCases)
    func theWrongPartiesAndTheWrongStepsAreRefused(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            let job = try await h.arrivedJob()
            // Another driver, an unknown job.
            try await h.driver("other", kilometersNorth: 4)
            await #expect(throws: DispatchError.jobNotFound) {
                try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "other", actualHundredths: 500)
            }
            await #expect(throws: DispatchError.jobNotFound) {
                try await h.dispatch.adjustments.proposeVolume("job_nope", driverID: "d1", actualHundredths: 500)
            }
            // Not arrived yet.
            let early = try await h.book("cust2")
            _ = try await h.dispatch.claims.accept(early.id, driverID: "other")
            await #expect(throws: DispatchError.notArrived(.accepted)) {
                try await h.dispatch.adjustments.proposeVolume(early.id, driverID: "other", actualHundredths: 500)
            }
            // No proposal yet: nothing to approve or extend.
            await #expect(throws: DispatchError.noPendingAdjustment) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "cust") }
            await #expect(throws: DispatchError.noPendingAdjustment) {
                try await h.dispatch.adjustmentEndings.extendProposal(early.id, driverID: "other")
            }
            _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d1", actualHundredths: 650)
            // Another customer's job.
            await #expect(throws: DispatchError.jobNotFound) { try await h.dispatch.adjustments.approveVolume(job.id, customerID: "eve") }
            // The customer cannot cancel an arrived job to dodge the trip fee.
            await #expect(throws: DispatchError.invalidTransition(from: .arrived, to: "cancelled", allowed: [])) {
                try await h.dispatch.steps.cancel(job.id, by: Self.customer, reason: nil)
            }
            // An operator can; the proposal closes and the hold is released.
            #expect(try await h.dispatch.steps.cancel(job.id, by: Self.ops, reason: nil).status == .cancelled)
            let after = try await h.dispatch.adjustments.adjustmentAndHold(job.id)
            #expect(after.adjustment?.status == .cancelled && after.hold?.status == .cancelled)
        }
    }

    /// Approve and decline together, several taps of each: exactly one decision wins, and the
    /// job and the payment agree with it.
    @Test(arguments: TestEngine.allCases)
    func approveAndDeclineRaceToOneConsistentOutcome(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            for round in 0..<4 {
                let job = try await h.arrivedJob(customer: "c\(round)", driver: "d\(round)")
                _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d\(round)", actualHundredths: 650)
                let replies = await withTaskGroup(of: (String, APIError?).self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            if index % 2 == 0 {
                                let error = await refusal { try await h.dispatch.adjustments.approveVolume(job.id, customerID: job.customerID) }
                                return ("approve", error)
                            }
                            let error = await refusal { try await h.dispatch.adjustmentEndings.declineVolume(job.id, customerID: job.customerID) }
                            return ("decline", error)
                        }
                    }
                    var all: [(String, APIError?)] = []
                    for await reply in group { all.append(reply) }
                    return all
                }
                let winners = Set(replies.filter { $0.1 == nil }.map(\.0))
                #expect(winners.count == 1)
                #expect(replies.allSatisfy { $0.1 == nil || $0.1?.code == ErrorCode.adjustmentAlreadyDecided })
                let stored = try await h.job(job.id)
                let hold = try await h.dispatch.payments.hold(job.id)
                let ledger = try await h.ledger(job.id)
                if winners == ["approve"] {
                    #expect(stored.status == .arrived && stored.priceMinor == Self.raised)
                    #expect(ledger.hold?.status == .authorized && ledger.hold?.amountMinor == Self.raised)
                } else {
                    #expect(stored.status == .cancelled && stored.priceMinor == Self.booked)
                    #expect(ledger.hold?.status == .captured && ledger.hold?.capturedMinor == 5000)
                }
                #expect(hold?.pendingOp == nil)
            }
        }
    }

    /// An operator's cancel (job, then adjustment) racing the customer's approval (which also
    /// takes the job first): never a deadlock (PostgreSQL answered 500), always one story.
    @Test(arguments: TestEngine.allCases)
    func anOperatorCancelRacingAnApprovalNeverDeadlocks(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            for round in 0..<6 {
                let job = try await h.arrivedJob(customer: "c\(round)", driver: "d\(round)")
                _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d\(round)", actualHundredths: 650)
                async let cancel = refusal { try await h.dispatch.steps.cancel(job.id, by: Self.ops, reason: "site closed") }
                async let approve = refusal { try await h.dispatch.adjustments.approveVolume(job.id, customerID: job.customerID) }
                let (cancelled, approved) = await (cancel, approve)
                #expect(cancelled == nil, "\(String(describing: cancelled))")
                let refusedAsAClientError = approved.map { (400..<500).contains($0.status) } ?? true
                #expect(refusedAsAClientError, "\(String(describing: approved))")
                #expect(try await h.job(job.id).status == .cancelled)
                let adjustment = try await h.dispatch.adjustments.adjustment(job.id)
                #expect(adjustment != nil && adjustment?.status != .pending)
            }
        }
    }

    /// The driver's step to `started` racing their own proposal of a higher price: one wins;
    /// work never starts with a proposal pending (on PostgreSQL under READ COMMITTED the start's
    /// subquery read a snapshot from before the proposal committed).
    @Test(arguments: TestEngine.allCases)
    func startingRacingANewProposalNeverStartsWithAProposalPending(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            for round in 0..<6 {
                let job = try await h.arrivedJob(customer: "c\(round)", driver: "d\(round)")
                async let propose = refusal { try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d\(round)", actualHundredths: 650) }
                async let start = refusal { try await h.dispatch.steps.advance(job.id, driverID: "d\(round)", to: "started") }
                let (proposed, started) = await (propose, start)
                #expect((proposed == nil) != (started == nil), "\(String(describing: proposed)) / \(String(describing: started))")
                #expect((proposed?.status ?? 0) < 500 && (started?.status ?? 0) < 500)
                let stored = try await h.job(job.id)
                if started == nil {
                    #expect(stored.status == .started)
                } else {
                    #expect(stored.status == .arrived && started == DispatchError.adjustmentPending)
                }
            }
        }
    }

    /// The driver's trip-fee cancel racing the customer's late approval: one wins, and the
    /// job and the payment agree.
    @Test(arguments: TestEngine.allCases)
    func theDriversCancelAndALateApprovalRaceToOneOutcome(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database, clock: ManualClock(Self.start))
            for round in 0..<3 {
                let job = try await h.arrivedJob(customer: "c\(round)", driver: "d\(round)")
                _ = try await h.dispatch.adjustments.proposeVolume(job.id, driverID: "d\(round)", actualHundredths: 650)
                h.clock.advance(by: 301)
                async let cancel = refusal { try await h.dispatch.adjustmentEndings.cancelWithTripFee(job.id, driverID: "d\(round)") }
                async let approve = refusal { try await h.dispatch.adjustments.approveVolume(job.id, customerID: job.customerID) }
                let (cancelled, approved) = await (cancel, approve)
                #expect((cancelled == nil) != (approved == nil))
                let ledger = try await h.ledger(job.id)
                let stored = try await h.job(job.id)
                if approved == nil {
                    #expect(cancelled?.code == ErrorCode.adjustmentAlreadyDecided)
                    #expect(stored.status == .arrived && ledger.hold?.amountMinor == Self.raised)
                } else {
                    #expect(approved?.code == ErrorCode.adjustmentAlreadyDecided)
                    #expect(stored.status == .cancelled && ledger.hold?.capturedMinor == 5000)
                }
            }
        }
    }
}

/// What a call answers as a route would: nil when it succeeded, its client error otherwise;
/// anything else (a deadlock, a lost connection) is the 500 a client would get.
private func refusal<T: Sendable>(_ call: @Sendable () async throws -> T) async -> APIError? {
    do {
        _ = try await call()
        return nil
    } catch let error as APIError {
        return error
    } catch {
        return .internalServerError
    }
}
