import Foundation
import HeraldCore
import Testing

@testable import HeraldDispatch

/// The price adjustment's lifecycle as a pure rule: each event on each state → the status
/// after it and the exact effects, a repeat, or the refusal the routes answer.
@Suite struct AdjustmentLifecycleTests {
    func job(_ status: JobStatus, price: Int64 = 23_400) -> JobRecord {
        JobRecord(
            id: "job_1", customerID: "cus_1", driverID: "drv_1", status: status, address: "1 Main St", items: "[]", priceMinor: price,
            currency: "USD", priceLines: "[]", offerRound: 1, version: 1, createdAt: 0, updatedAt: 0)
    }

    func proposal(
        _ status: AdjustmentStatus = .pending, automatic: Int = 0, deadline: Int64? = 300_000, extensions: Int = 0, expiredAt: Int64? = nil,
        decidedBy: String? = nil
    ) -> AdjustmentRecord {
        AdjustmentRecord(
            jobID: "job_1", driverID: "drv_1", customerID: "cus_1", status: status, automatic: automatic, originalVolumeHundredths: 400,
            actualVolumeHundredths: 650, originalPriceMinor: 23_400, newPriceMinor: 32_150, currency: "USD", priceLines: "[]", tripFeeMinor: nil,
            deadlineAt: deadline, extensions: extensions, expiredAt: expiredAt, decidedAt: nil, decidedBy: decidedBy, createdAt: 0, updatedAt: 0)
    }

    func change(_ decision: AdjustmentLifecycle.Decision) -> AdjustmentLifecycle.Change? {
        if case .move(let change) = decision { return change }
        return nil
    }

    @Test func aHigherPriceWaitsAndALowerOneHoldsAtOnce() throws {
        let higher = try #require(change(AdjustmentLifecycle.decide(nil, .propose(newPriceMinor: 32_150, job: job(.arrived)))))
        #expect(higher.to == .pending && higher.effects == [.notify(.proposal(reminder: false)), .wakeDeadlines, .announce(.proposed)])
        // Not higher (equal counts): no question, the job and the hold follow at once (pitfall 5).
        let same = try #require(change(AdjustmentLifecycle.decide(nil, .propose(newPriceMinor: 23_400, job: job(.arrived)))))
        #expect(same.to == .approved && same.effects == [.repriceJob, .planHoldChange, .notify(.lowered), .settlePayment, .announce(.approved)])
        #expect(same.effects.filter { !$0.runsInsideCommit } == [.settlePayment, .announce(.approved)])
        // One adjustment per job, and only at the door.
        #expect(AdjustmentLifecycle.decide(proposal(), .propose(newPriceMinor: 40_000, job: job(.arrived))) == .refused(.alreadyMade))
        #expect(AdjustmentLifecycle.decide(nil, .propose(newPriceMinor: 40_000, job: job(.enRoute))) == .refused(.notArrived(.enRoute)))
    }

    @Test func theCustomerDecidesOnceAndARepeatIsNotAChange() throws {
        let approve = try #require(change(AdjustmentLifecycle.decide(proposal(), .approve(by: "cus_1"))))
        #expect(approve.to == .approved && approve.effects == [.repriceJob, .recordRaisedHold, .announce(.approved), .notify(.approved)])
        let decline = try #require(change(AdjustmentLifecycle.decide(proposal(), .decline(by: "cus_1", proceed: false, tripFeeMinor: 5_000))))
        #expect(
            decline.to == .declined
                && decline.effects == [
                    .endJobWithTripFee(by: .customer, reason: "volume_declined"), .notify(.declined(tripFeeMinor: 5_000)), .announce(.declined(proceed: false)),
                ])
        let proceed = try #require(change(AdjustmentLifecycle.decide(proposal(), .decline(by: "cus_1", proceed: true, tripFeeMinor: 0))))
        #expect(proceed.to == .declined && proceed.effects == [.keepJobAtDoor, .announce(.declined(proceed: true)), .notify(.declinedToProceed)])
        // The same decision again answers as it stands; the opposite one, or another's, is refused.
        #expect(AdjustmentLifecycle.decide(proposal(.approved, decidedBy: "cus_1"), .approve(by: "cus_1")) == .already)
        #expect(
            AdjustmentLifecycle.decide(proposal(.approved, decidedBy: "cus_1"), .decline(by: "cus_1", proceed: false, tripFeeMinor: 0))
                == .refused(.alreadyDecided))
        #expect(AdjustmentLifecycle.decide(proposal(.cancelled, decidedBy: "drv_1"), .approve(by: "cus_1")) == .refused(.alreadyDecided))
        // Nothing to answer: none, or one approved automatically.
        #expect(AdjustmentLifecycle.decide(nil, .approve(by: "cus_1")) == .refused(.noPending))
        #expect(AdjustmentLifecycle.decide(proposal(.approved, automatic: 1, decidedBy: "system"), .approve(by: "cus_1")) == .refused(.noPending))
    }

    @Test func theDriverExtendsUpToTheLimitAndLeavesOnlyAfterTheDeadline() throws {
        let extend = try #require(change(AdjustmentLifecycle.decide(proposal(extensions: 1), .extend(by: "drv_1", maxExtensions: 2))))
        #expect(extend.to == .pending && extend.effects == [.wakeDeadlines, .announce(.extended), .notify(.proposal(reminder: true))])
        #expect(AdjustmentLifecycle.decide(proposal(extensions: 2), .extend(by: "drv_1", maxExtensions: 2)) == .refused(.extensionLimit(2)))
        #expect(AdjustmentLifecycle.decide(proposal(.approved), .extend(by: "drv_1", maxExtensions: 2)) == .refused(.noPending))

        let early = AdjustmentLifecycle.Event.cancelWithTripFee(by: "drv_1", now: 299_999, tripFeeMinor: 5_000)
        #expect(AdjustmentLifecycle.decide(proposal(), early) == .refused(.notExpired))
        let leave = try #require(
            change(AdjustmentLifecycle.decide(proposal(), .cancelWithTripFee(by: "drv_1", now: 300_000, tripFeeMinor: 5_000))))
        #expect(
            leave.to == .cancelled
                && leave.effects == [.endJobWithTripFee(by: .driver, reason: "customer_unresponsive"), .notify(.leftUnanswered(tripFeeMinor: 5_000))])
        #expect(AdjustmentLifecycle.decide(proposal(.cancelled, decidedBy: "drv_1"), early) == .already)
        #expect(AdjustmentLifecycle.decide(proposal(.declined, decidedBy: "cus_1"), early) == .refused(.alreadyDecided))
        #expect(AdjustmentLifecycle.decide(nil, early) == .refused(.noPending))
    }

    @Test func aPassedDeadlineIsToldOncePerDeadline() throws {
        let passed = AdjustmentLifecycle.Event.deadlinePassed(now: 300_000, maxExtensions: 2, tripFeeMinor: 5_000)
        let told = try #require(change(AdjustmentLifecycle.decide(proposal(extensions: 1), passed)))
        #expect(
            told.to == .pending
                && told.effects == [.notify(.deadlinePassed(extensionsLeft: 1)), .announce(.deadlinePassed(extensionsLeft: 1, tripFeeMinor: 5_000))])
        #expect(AdjustmentLifecycle.decide(proposal(expiredAt: 300_000), passed) == .already)
        #expect(AdjustmentLifecycle.decide(proposal(deadline: 300_001), passed) == .refused(.noPending))
        #expect(AdjustmentLifecycle.decide(proposal(.approved), passed) == .refused(.noPending))
    }

    @Test func noticesAndEventsNameTheRightPeople() {
        let a = proposal()
        #expect(AdjustmentNotices.draft(.proposal(reminder: true), a).title == "Reminder: Price Adjustment Required")
        #expect(AdjustmentNotices.draft(.proposal(reminder: false), a).body == "Volume increased to 6.5 cu yd. New price: $321.50")
        #expect(AdjustmentNotices.draft(.declined(tripFeeMinor: 5_000), a).body == "The job is cancelled; you get the $50.00 trip fee.")
        #expect(AdjustmentNotices.draft(.leftUnanswered(tripFeeMinor: 2_500), a).userIDs == ["cus_1"])
        #expect(AdjustmentNotices.draft(.deadlinePassed(extensionsLeft: 0), a).body == "The customer hasn't responded. Call them or cancel with the trip fee.")
        #expect(
            AdjustmentNotices.events(.extended, a, job: nil).map { "\($0.name)@\($0.room)" } == ["volume:proposed@user:cus_1", "volume:extended@driver:drv_1"])
        let proceed = AdjustmentNotices.events(.declined(proceed: true), a, job: job(.arrived))
        #expect(proceed.count == 1 && proceed[0].payload["price_minor"] == 23_400 && proceed[0].payload["proceed_at_original_price"] == true)
    }
}
