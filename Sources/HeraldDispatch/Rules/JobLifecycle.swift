/// A job's lifecycle as a pure rule: an event on a job → the new status and every effect the
/// change owes, or a refusal that lists what the party could have done.
///
/// Why effects are values: before, each route coded its own notify-publish-charge sequence
/// beside its SQL, and a new transition meant finding all of them. Now the rule says *what*
/// follows a change and `JobTransitions` says *how*, the same way for every caller: the
/// row's change and the effects inside the unit of work commit together; the rest runs
/// after the commit, never on a rollback. The conditional UPDATE that follows a decision
/// still checks the `from` status, so two racing requests cannot both win.
public enum JobLifecycle {
    /// What happens to a job.
    public enum Event: Sendable, Equatable {
        /// A driver claims a pending job (`POST /jobs/{id}/accept`).
        case claim(driverID: String)
        /// The assigned driver's next step (`en_route`, `arrived`, `started`, `completed`).
        case step(JobStatus)
        /// A party cancels: the customer before arrival, an operator or service at any time.
        case cancel(by: JobActor)
        /// A scheduled hold was refused: the system cancels before the work starts.
        case paymentRefused
        /// The last offer round ended unclaimed.
        case expire
        /// A price proposal ended the job at the door (declined, or left unanswered): the
        /// trip fee is captured, or the hold released when the fee is zero; nil: no hold.
        case endWithTripFee(by: JobActor, fee: Int64?)
    }

    public enum Decision: Sendable, Equatable {
        case move(Transition)
        /// The job is already where the event would take it (a repeat): answer with it.
        case already
        /// Not possible from here; `allowed` is what `actor` could do (for the 409).
        case refused(allowed: [JobStatus])
    }

    public struct Transition: Sendable, Equatable {
        public var from: JobStatus
        public var to: JobStatus
        public var actor: JobActor
        /// In order. `JobEffect.runsInsideCommit` splits them between the unit of work and after it.
        public var effects: [JobEffect]
    }

    public static func decide(_ job: JobRecord, _ event: Event) -> Decision {
        let from = job.status
        switch event {
        case .claim:
            guard from == .pending, job.driverID == nil else { return .refused(allowed: []) }
            return .move(
                Transition(
                    from: from, to: .accepted, actor: .driver,
                    effects: [
                        .closeOffers(.lost), .joinJobRoom, .announceDriverAssigned, .announce(toOfferedDrivers: true),
                        .notify(.status(.accepted)), .updateActivity(showingDriver: true), .startActivity,
                    ]))
        case .step(let to):
            if from == to { return .already }
            if case .invalid(let allowed) = JobStateMachine.check(from: from, to: to, by: .driver) { return .refused(allowed: allowed) }
            var effects: [JobEffect] = to == .completed ? [.recordCompletion, .captureFinalPrice] : []
            effects.append(.announce(toOfferedDrivers: false))
            if to == .completed { effects.append(.settlePayment) }
            if JobNotices.customerMessage(to, driverName: nil) != nil { effects.append(.notify(.status(to))) }
            effects.append(.updateActivity(showingDriver: to == .arrived))
            if to == .enRoute { effects.append(.takeScheduledHold) }
            return .move(Transition(from: from, to: to, actor: .driver, effects: effects))
        case .cancel(let actor):
            return cancel(job, by: actor, notice: actor == .customer ? (job.driverID == nil ? nil : .cancelledByCustomer) : .status(.cancelled))
        case .paymentRefused:
            return cancel(job, by: .system, notice: .paymentDeclined)
        case .expire:
            guard from == .pending else { return .refused(allowed: JobStateMachine.allowedTransitions(from: from, by: .system)) }
            return .move(
                Transition(
                    from: from, to: .expired, actor: .system,
                    effects: [
                        .closeOffers(.expired), .planHold(.cancel), .announce(toOfferedDrivers: true), .settlePayment, .notify(.status(.expired)),
                        .updateActivity(showingDriver: false),
                    ]))
        case .endWithTripFee(let actor, let fee):
            guard from == .arrived else { return .refused(allowed: JobStateMachine.allowedTransitions(from: from, by: actor)) }
            var effects: [JobEffect] = fee.map { [.planHold($0 > 0 ? .capture($0) : .cancel)] } ?? []
            effects += [.settlePayment, .announce(toOfferedDrivers: false), .notify(.decision), .updateActivity(showingDriver: false)]
            return .move(Transition(from: from, to: .cancelled, actor: actor, effects: effects))
        }
    }

    /// Every cancel closes the offers and any price proposal, releases the hold, drops the
    /// job from feeds and tells the other party.
    static func cancel(_ job: JobRecord, by actor: JobActor, notice: JobNotice?) -> Decision {
        if job.status == .cancelled { return .already }
        if case .invalid(let allowed) = JobStateMachine.check(from: job.status, to: .cancelled, by: actor) { return .refused(allowed: allowed) }
        var effects: [JobEffect] = [.closeOffers(.cancelled), .closeAdjustment, .planHold(.cancel), .announce(toOfferedDrivers: true), .settlePayment]
        if let notice { effects.append(.notify(notice)) }
        effects.append(.updateActivity(showingDriver: false))
        return .move(Transition(from: job.status, to: .cancelled, actor: actor, effects: effects))
    }
}

/// What a job's change owes besides its row and its event record.
public enum JobEffect: Sendable, Equatable {
    // Inside the unit of work
    /// The offers still open end with this outcome (the claim's winner gets `won`).
    case closeOffers(OfferOutcome)
    /// A pending price proposal ends with the job.
    case closeAdjustment
    /// The provider call the change implies, made after the commit (`settlePayment`).
    case planHold(HoldOperation)
    /// Completion captures the job's final price (it may have changed on site).
    case captureFinalPrice
    /// The driver's completed-jobs count.
    case recordCompletion
    case notify(JobNotice)
    /// The job's Live Activities get the new status (and the driver's name when shown).
    case updateActivity(showingDriver: Bool)
    /// The claim starts the customer's Live Activity (push-to-start).
    case startActivity
    // After the commit
    /// The claiming driver's sockets follow the job's room.
    case joinJobRoom
    /// `job:driver-assigned` to the job's room (the customer hears who is coming first).
    case announceDriverAssigned
    /// `job:status` to the job's room and, for a job leaving the market, to the feeds that
    /// show it (and every offered driver when asked).
    case announce(toOfferedDrivers: Bool)
    /// Makes the owed provider call; a refused scheduled hold cancels the job.
    case settlePayment
    /// A job booked ahead takes its scheduled hold when the driver sets off.
    case takeScheduledHold

    /// Whether the effect is written in the transition's unit of work (else it follows the commit).
    public var runsInsideCommit: Bool {
        switch self {
        case .closeOffers, .closeAdjustment, .planHold, .captureFinalPrice, .recordCompletion, .notify, .updateActivity, .startActivity: true
        case .joinJobRoom, .announceDriverAssigned, .announce, .settlePayment, .takeScheduledHold: false
        }
    }
}

/// Who is told what about a job's change (`JobNotices` writes the text).
public enum JobNotice: Sendable, Equatable {
    /// The customer hears the new status (`JobNotices.customerMessage`).
    case status(JobStatus)
    /// The assigned driver hears that the customer cancelled.
    case cancelledByCustomer
    /// The customer (and the driver, if assigned) hear that the card was refused.
    case paymentDeclined
    /// The price-adjustment decision's own message, which its caller writes.
    case decision
}
