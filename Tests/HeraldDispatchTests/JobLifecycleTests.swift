import Foundation
import HeraldCore
import Testing

@testable import HeraldDispatch

/// The job lifecycle as a pure rule: each event on each status → the new status and the
/// exact effects, or the refusal with what the party could have done.
@Suite struct JobLifecycleTests {
    func job(_ status: JobStatus, driver: String? = nil) -> JobRecord {
        JobRecord(
            id: "job_1", customerID: "cus_1", driverID: driver, status: status, address: "1 Main St", items: "[]", priceMinor: 18_750,
            currency: "USD", priceLines: "[]", offerRound: 1, version: 1, createdAt: 0, updatedAt: 0)
    }

    func transition(_ decision: JobLifecycle.Decision) -> JobLifecycle.Transition? {
        if case .move(let transition) = decision { return transition }
        return nil
    }

    @Test func theClaimAssignsTellsTheCustomerAndStartsTheActivity() throws {
        let claim = try #require(transition(JobLifecycle.decide(job(.pending), .claim(driverID: "drv_1"))))
        #expect(claim.from == .pending && claim.to == .accepted && claim.actor == .driver)
        #expect(
            claim.effects == [
                .closeOffers(.lost), .joinJobRoom, .announceDriverAssigned, .announce(toOfferedDrivers: true), .notify(.status(.accepted)),
                .updateActivity(showingDriver: true), .startActivity,
            ])
        // A claimed job cannot be claimed again; the claim route answers from the winner.
        #expect(JobLifecycle.decide(job(.accepted, driver: "drv_2"), .claim(driverID: "drv_1")) == .refused(allowed: []))
        #expect(JobLifecycle.decide(job(.expired), .claim(driverID: "drv_1")) == .refused(allowed: []))
    }

    @Test func theDriversStepsGoInOrderAndCompletionCapturesThePrice() throws {
        let enRoute = try #require(transition(JobLifecycle.decide(job(.accepted, driver: "d"), .step(.enRoute))))
        #expect(enRoute.effects == [.announce(toOfferedDrivers: false), .notify(.status(.enRoute)), .updateActivity(showingDriver: false), .takeScheduledHold])
        let arrived = try #require(transition(JobLifecycle.decide(job(.enRoute, driver: "d"), .step(.arrived))))
        #expect(arrived.effects == [.announce(toOfferedDrivers: false), .notify(.status(.arrived)), .updateActivity(showingDriver: true)])
        let completed = try #require(transition(JobLifecycle.decide(job(.started, driver: "d"), .step(.completed))))
        #expect(
            completed.effects == [
                .recordCompletion, .captureFinalPrice, .announce(toOfferedDrivers: false), .settlePayment, .notify(.status(.completed)),
                .updateActivity(showingDriver: false),
            ])
        // Skipping a step is refused with the one step allowed; a repeat is not a change.
        #expect(JobLifecycle.decide(job(.accepted, driver: "d"), .step(.arrived)) == .refused(allowed: [.enRoute]))
        #expect(JobLifecycle.decide(job(.completed, driver: "d"), .step(.started)) == .refused(allowed: []))
        #expect(JobLifecycle.decide(job(.arrived, driver: "d"), .step(.arrived)) == .already)
        // Which effects run inside the commit and which after it.
        #expect(completed.effects.filter { !$0.runsInsideCommit } == [.announce(toOfferedDrivers: false), .settlePayment])
    }

    @Test func aCancelClosesEverythingAndTellsTheOtherParty() throws {
        let closing: [JobEffect] = [.closeOffers(.cancelled), .closeAdjustment, .planHold(.cancel), .announce(toOfferedDrivers: true), .settlePayment]
        let byCustomer = try #require(transition(JobLifecycle.decide(job(.enRoute, driver: "d"), .cancel(by: .customer))))
        #expect(byCustomer.effects == closing + [.notify(.cancelledByCustomer), .updateActivity(showingDriver: false)])
        // Nobody to tell before a driver took it.
        let unassigned = try #require(transition(JobLifecycle.decide(job(.pending), .cancel(by: .customer))))
        #expect(unassigned.effects == closing + [.updateActivity(showingDriver: false)])
        let byOperator = try #require(transition(JobLifecycle.decide(job(.started, driver: "d"), .cancel(by: .operator))))
        #expect(byOperator.actor == .operator && byOperator.effects == closing + [.notify(.status(.cancelled)), .updateActivity(showingDriver: false)])
        // The customer may not cancel once the driver is at the door (the trip fee decides then).
        #expect(JobLifecycle.decide(job(.arrived, driver: "d"), .cancel(by: .customer)) == .refused(allowed: []))
        #expect(JobLifecycle.decide(job(.cancelled), .cancel(by: .customer)) == .already)
        #expect(JobLifecycle.decide(job(.completed, driver: "d"), .cancel(by: .operator)) == .refused(allowed: []))
    }

    @Test func aRefusedCardCancelsOnlyBeforeTheWorkStarts() throws {
        let unpaid = try #require(transition(JobLifecycle.decide(job(.accepted, driver: "d"), .paymentRefused)))
        #expect(unpaid.actor == .system && unpaid.to == .cancelled && unpaid.effects.contains(.notify(.paymentDeclined)))
        #expect(JobLifecycle.decide(job(.started, driver: "d"), .paymentRefused) == .refused(allowed: []))
    }

    @Test func expiryAndTheTripFeeEndTheJob() throws {
        let expired = try #require(transition(JobLifecycle.decide(job(.pending), .expire)))
        #expect(
            expired.effects == [
                .closeOffers(.expired), .planHold(.cancel), .announce(toOfferedDrivers: true), .settlePayment, .notify(.status(.expired)),
                .updateActivity(showingDriver: false),
            ])
        #expect(JobLifecycle.decide(job(.accepted, driver: "d"), .expire) == .refused(allowed: [.cancelled]))
        let fee = try #require(transition(JobLifecycle.decide(job(.arrived, driver: "d"), .endWithTripFee(by: .customer, fee: 2_500))))
        #expect(fee.effects.first == .planHold(.capture(2_500)) && fee.to == .cancelled && fee.actor == .customer)
        let free = try #require(transition(JobLifecycle.decide(job(.arrived, driver: "d"), .endWithTripFee(by: .driver, fee: 0))))
        #expect(free.effects.first == .planHold(.cancel))
        let noHold = try #require(transition(JobLifecycle.decide(job(.arrived, driver: "d"), .endWithTripFee(by: .driver, fee: nil))))
        #expect(noHold.effects == [.settlePayment, .announce(toOfferedDrivers: false), .notify(.decision), .updateActivity(showingDriver: false)])
        #expect(JobLifecycle.decide(job(.started, driver: "d"), .endWithTripFee(by: .driver, fee: 0)) == .refused(allowed: [.completed]))
    }

    @Test func noticesNameTheRightPeople() {
        let assigned = job(.enRoute, driver: "drv_1")
        let accepted = JobNotices.drafts(.status(.accepted), job: job(.pending, driver: "drv_1"), driverName: "Ana Diaz")
        #expect(accepted.map(\.userIDs) == [["cus_1"]] && accepted[0].title == "Driver Assigned" && accepted[0].body == "Ana Diaz has accepted your job.")
        #expect(accepted[0].data["driver_id"] == "drv_1" && accepted[0].collapseKey == "job-job_1")
        #expect(JobNotices.drafts(.cancelledByCustomer, job: assigned, driverName: nil).map(\.userIDs) == [["drv_1"]])
        #expect(JobNotices.drafts(.status(.cancelled), job: assigned, driverName: nil).first?.collapseKey == nil)
        let declined = JobNotices.drafts(.paymentDeclined, job: assigned, driverName: nil)
        #expect(declined.map(\.userIDs) == [["cus_1"], ["drv_1"]] && declined[0].data["reason"] == "payment_declined")
        #expect(JobNotices.drafts(.status(.pending), job: assigned, driverName: nil).isEmpty)
    }
}
