/// The on-site price adjustment's lifecycle as a pure rule: the job's adjustment (or none) and
/// an event → the adjustment's status after it and every effect the change owes, a repeat to
/// answer as it stands, or the refusal.
///
/// Why a rule apart from `JobLifecycle`: a proposal lives beside its job (pending while the
/// job waits at the door) and most of its changes leave the job's status alone; two of its
/// endings do end the job, and those go through `JobLifecycle.endWithTripFee` as the effect
/// `endJobWithTripFee`. The conditional UPDATE that follows a decision still checks
/// `status = 'pending'`, so racing decisions cannot both win; the loser answers from the row
/// that won (`already` when it was the same party's same decision).
public enum AdjustmentLifecycle {
    public enum Event: Sendable, Equatable {
        /// The assigned driver's measurement (`POST /drivers/jobs/{id}/volume`): the new
        /// price against the job as it stands.
        case propose(newPriceMinor: Int64, job: JobRecord)
        /// The customer approves a higher price.
        case approve(by: String)
        /// The customer declines: the job ends with the trip fee, or with `proceed` goes on at
        /// its booked price.
        case decline(by: String, proceed: Bool, tripFeeMinor: Int64)
        /// The driver gives the customer more time.
        case extend(by: String, maxExtensions: Int)
        /// The driver leaves with the trip fee once the deadline passed.
        case cancelWithTripFee(by: String, now: Int64, tripFeeMinor: Int64)
        /// The deadline passed unanswered: the driver hears it once per deadline.
        case deadlinePassed(now: Int64, maxExtensions: Int, tripFeeMinor: Int64)
    }

    public enum Decision: Sendable, Equatable {
        case move(Change)
        /// The same party made the same decision before (a double tap): answer with it.
        case already
        case refused(Refusal)
    }

    public struct Change: Sendable, Equatable {
        /// The adjustment's status after the change (an extension or a deadline keeps `pending`).
        public var to: AdjustmentStatus
        /// In order; `AdjustmentEffect.runsInsideCommit` splits them between the unit of work and after it.
        public var effects: [AdjustmentEffect]

        /// Who ends the job, when the change does (`endJobWithTripFee`).
        public var jobEndedBy: JobActor? {
            for case .endJobWithTripFee(let actor, _) in effects { return actor }
            return nil
        }
    }

    /// Why an event cannot apply (the routes' 409s).
    public enum Refusal: Sendable, Equatable {
        /// One adjustment per job.
        case alreadyMade
        /// Only a job at the door can be measured.
        case notArrived(JobStatus)
        /// Nothing waits for an answer (none, an automatic one, or no longer pending).
        case noPending
        /// Someone else decided, or the opposite decision won.
        case alreadyDecided
        /// The trip fee is owed only after the deadline.
        case notExpired
        case extensionLimit(Int)
    }

    public static func decide(_ adjustment: AdjustmentRecord?, _ event: Event) -> Decision {
        switch event {
        case .propose(let newPrice, let job):
            guard adjustment == nil else { return .refused(.alreadyMade) }
            guard job.status == .arrived else { return .refused(.notArrived(job.status)) }
            // A higher price waits for the customer; one not higher holds at once (pitfall 5:
            // the hold follows the lower price, nobody is asked).
            if newPrice > job.priceMinor {
                return .move(Change(to: .pending, effects: [.notify(.proposal(reminder: false)), .wakeDeadlines, .announce(.proposed)]))
            }
            return .move(Change(to: .approved, effects: [.repriceJob, .planHoldChange, .notify(.lowered), .settlePayment, .announce(.approved)]))
        case .approve(let customerID):
            return customerDecision(adjustment, deciding: .approved, by: customerID) {
                Change(to: .approved, effects: [.repriceJob, .recordRaisedHold, .announce(.approved), .notify(.approved)])
            }
        case .decline(let customerID, let proceed, let fee):
            return customerDecision(adjustment, deciding: .declined, by: customerID) {
                proceed
                    ? Change(to: .declined, effects: [.keepJobAtDoor, .announce(.declined(proceed: true)), .notify(.declinedToProceed)])
                    : Change(
                        to: .declined,
                        effects: [
                            .endJobWithTripFee(by: .customer, reason: "volume_declined"), .notify(.declined(tripFeeMinor: fee)),
                            .announce(.declined(proceed: false)),
                        ])
            }
        case .extend(_, let max):
            guard let adjustment, adjustment.status == .pending else { return .refused(.noPending) }
            guard adjustment.extensions < max else { return .refused(.extensionLimit(max)) }
            return .move(Change(to: .pending, effects: [.wakeDeadlines, .announce(.extended), .notify(.proposal(reminder: true))]))
        case .cancelWithTripFee(let driverID, let now, let fee):
            guard let adjustment else { return .refused(.noPending) }
            switch adjustment.status {
            case .cancelled where adjustment.decidedBy == driverID: return .already
            case .pending: break
            default: return .refused(.alreadyDecided)
            }
            guard (adjustment.deadlineAt ?? 0) <= now else { return .refused(.notExpired) }
            return .move(
                Change(
                    to: .cancelled, effects: [.endJobWithTripFee(by: .driver, reason: "customer_unresponsive"), .notify(.leftUnanswered(tripFeeMinor: fee))]))
        case .deadlinePassed(let now, let max, let fee):
            guard let adjustment, adjustment.status == .pending, let deadline = adjustment.deadlineAt, deadline <= now else { return .refused(.noPending) }
            if adjustment.expiredAt != nil { return .already }
            let left = Swift.max(0, max - adjustment.extensions)
            return .move(
                Change(
                    to: .pending,
                    effects: [.notify(.deadlinePassed(extensionsLeft: left)), .announce(.deadlinePassed(extensionsLeft: left, tripFeeMinor: fee))]))
        }
    }

    /// The customer's answer to a proposal that waits for one.
    private static func customerDecision(
        _ adjustment: AdjustmentRecord?, deciding: AdjustmentStatus, by customerID: String, change: () -> Change
    ) -> Decision {
        guard let adjustment, adjustment.automatic == 0 else { return .refused(.noPending) }
        switch adjustment.status {
        case .pending: return .move(change())
        case deciding where adjustment.decidedBy == customerID: return .already
        default: return .refused(.alreadyDecided)
        }
    }
}

/// What an adjustment's change owes besides its own row.
public enum AdjustmentEffect: Sendable, Equatable {
    // Inside the unit of work
    /// The job takes the adjustment's price, lines and volume.
    case repriceJob
    /// The job stays at the door at its booked price (checked still `arrived`).
    case keepJobAtDoor
    /// The hold follows a lower price: the provider call is planned, made after the commit.
    case planHoldChange
    /// The raise the provider accepted before the unit of work is recorded on the hold.
    case recordRaisedHold
    /// The job ends through its own lifecycle (`JobLifecycle.endWithTripFee`), which writes
    /// this change's notice as its decision's message.
    case endJobWithTripFee(by: JobActor, reason: String)
    case notify(AdjustmentNotice)
    // After the commit
    /// The deadline scheduler looks again (a deadline is sooner than its next poll).
    case wakeDeadlines
    /// Makes the owed provider call (`planHoldChange`).
    case settlePayment
    case announce(AdjustmentAnnouncement)

    public var runsInsideCommit: Bool {
        switch self {
        case .repriceJob, .keepJobAtDoor, .planHoldChange, .recordRaisedHold, .endJobWithTripFee, .notify: true
        case .wakeDeadlines, .settlePayment, .announce: false
        }
    }
}

/// Who is told what about an adjustment's change (`AdjustmentNotices` writes the text).
public enum AdjustmentNotice: Sendable, Equatable {
    /// The customer's actionable push (`VOLUME_ADJUSTMENT`), first or as a reminder.
    case proposal(reminder: Bool)
    /// The customer hears of a lower price that holds at once.
    case lowered
    /// The driver hears the customer approved.
    case approved
    /// The driver hears the job ended with the trip fee.
    case declined(tripFeeMinor: Int64)
    /// The driver hears to go on at the booked price.
    case declinedToProceed
    /// The customer hears the driver left with the trip fee.
    case leftUnanswered(tripFeeMinor: Int64)
    /// The driver hears the deadline passed, and what is left to do.
    case deadlinePassed(extensionsLeft: Int)
}

/// The socket events of an adjustment's change (`AdjustmentNotices.events` names the rooms).
public enum AdjustmentAnnouncement: Sendable, Equatable {
    /// `volume:proposed` to the customer and the driver.
    case proposed
    /// `volume:approved` to the driver and the customer.
    case approved
    /// `volume:declined` to the driver.
    case declined(proceed: Bool)
    /// `volume:proposed` again to the customer, `volume:extended` to the driver.
    case extended
    /// `volume:expired` to the driver.
    case deadlinePassed(extensionsLeft: Int, tripFeeMinor: Int64)
}
