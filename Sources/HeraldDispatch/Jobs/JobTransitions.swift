import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit

/// Carries out a job's transitions as `JobLifecycle` decides them: the row's change, its
/// event record and the effects inside the unit of work commit together; the socket events
/// and the payment calls follow the commit. It also makes the payment calls a change owes
/// (and their retries), since a refused scheduled hold is itself a transition (cancelled,
/// `payment_declined`).
///
/// Why one executor: the claim, the driver's steps, every cancel, expiry and the price
/// adjustment's trip fee all change a job; each used to code its own notify-publish-charge
/// sequence. They now differ only in the row's conditional UPDATE, which each caller passes.
public final class JobTransitions: Sendable {
    let database: any Database
    let book: JobBook
    let notifier: JobNotifier
    let payments: JobPayments
    let clock: any HeraldClock
    let logger: Logger
    let offers = OfferStore()
    let adjustments = AdjustmentStore()
    let holds = HoldStore()
    /// Wakes the adjustment scheduler (a payment retry or a scheduled hold is due sooner).
    let paymentsChanged: WakeSignal

    /// The reason a job cancelled for a refused card records.
    static let paymentDeclined = "payment_declined"

    init(
        database: any Database, book: JobBook, notifier: JobNotifier, payments: JobPayments, clock: any HeraldClock, logger: Logger, paymentsChanged: WakeSignal
    ) {
        self.database = database
        self.book = book
        self.notifier = notifier
        self.payments = payments
        self.clock = clock
        self.logger = logger
        self.paymentsChanged = paymentsChanged
    }

    var now: Int64 { clock.now().epochMilliseconds }

    /// Commits `transition` inside `work`: `update` makes the row's conditional change (nil: it
    /// changed meanwhile, and nothing else happens); then the event record and the effects.
    /// `prepared` are the transition's notifications, prepared before the unit of work.
    func commit(
        _ transition: JobLifecycle.Transition, jobID: String, actorID: String?, reason: String? = nil, driver: DriverRecord?,
        prepared: [NotificationService.PreparedSend], in work: UnitOfWork, now: Int64, update: () async throws -> JobRecord?
    ) async throws -> JobRecord? {
        let db = work.db
        guard let updated = try await update() else { return nil }
        try await book.store.recordEvent(
            db, jobID: jobID, from: transition.from, to: transition.to, actorID: actorID, actor: transition.actor, reason: reason, now: now)
        var offered: [String] = []
        for effect in transition.effects {
            switch effect {
            case .closeOffers(let outcome): try await offers.decide(db, jobID: jobID, winner: outcome == .lost ? actorID : nil, outcome: outcome)
            case .closeAdjustment:
                _ = try await adjustments.decide(
                    db, jobID: jobID, to: .cancelled, by: actorID ?? transition.actor.rawValue, tripFeeMinor: nil, now: now)
            case .planHold(let operation): try await holds.plan(db, jobID: jobID, operation, now: now)
            case .captureFinalPrice: try await holds.plan(db, jobID: jobID, .capture(updated.priceMinor), now: now)
            case .recordCompletion:
                if let driverID = updated.driverID ?? actorID { try await book.drivers.recordCompletion(db, userID: driverID, now: now) }
            case .announce(toOfferedDrivers: true): offered = try await offers.driverIDs(db, jobID: jobID)
            default: break
            }
        }
        let afterCommit = transition.effects.filter { !$0.runsInsideCommit }
        let offeredDrivers = offered
        work.afterCommit { await self.run(afterCommit, updated, previous: transition.from, driver: driver, offered: offeredDrivers) }
        var written = false
        for effect in transition.effects {
            switch effect {
            case .notify where !written:
                try await notifier.notifications.write(prepared, in: work)
                written = true
            case .updateActivity(let showingDriver):
                try await notifier.publishActivity(JobActivity.change(updated, driverName: showingDriver ? driver?.name : nil), in: work)
            case .startActivity: try await notifier.startActivity(JobActivity.start(updated, driverName: driver?.name), in: work)
            default: break
            }
        }
        return updated
    }

    /// The effects that follow the commit, in the lifecycle's order.
    private func run(_ effects: [JobEffect], _ job: JobRecord, previous: JobStatus, driver: DriverRecord?, offered: [String]) async {
        for effect in effects {
            switch effect {
            case .joinJobRoom:
                if let driverID = job.driverID { await notifier.addToRoom([driverID], RoomName.job(job.id)) }
            case .announceDriverAssigned:
                if let driver {
                    await notifier.publish(
                        "job:driver-assigned", ["job_id": .string(job.id), "driver": DispatchJSON.driverSummary(driver)], to: RoomName.job(job.id))
                }
            case .announce: await notifier.announce(job, previous: previous, driver: driver, offeredDrivers: offered)
            case .settlePayment: await settle(job.id)
            default: break  // inside the commit, or the caller's (`takeScheduledHold`)
            }
        }
    }

    /// Cancels `job` as `event` decides (a party's cancel, or a refused card) with its
    /// notifications; nil when it is not possible now or the job changed meanwhile.
    func cancel(_ job: JobRecord, _ event: JobLifecycle.Event, actorID: String?, reason: String?, driver: DriverRecord?) async throws -> JobRecord? {
        guard case .move(let transition) = JobLifecycle.decide(job, event) else { return nil }
        let prepared = await notifier.prepare(drafts(transition, job: job, driverName: nil))
        let now = self.now
        return try await database.unitOfWork { work in
            try await self.commit(transition, jobID: job.id, actorID: actorID, reason: reason, driver: driver, prepared: prepared, in: work, now: now) {
                try await self.book.store.transition(
                    work.db, id: job.id, from: transition.from, to: .cancelled, driverID: nil, now: now, cancelledBy: transition.actor.rawValue,
                    reason: reason)
            }
        }
    }

    /// The notification drafts of `transition` (the job as it was, with the name the customer hears).
    func drafts(_ transition: JobLifecycle.Transition, job: JobRecord, driverName: String?) -> [NotificationDraft] {
        transition.effects.flatMap { effect -> [NotificationDraft] in
            guard case .notify(let notice) = effect else { return [] }
            return JobNotices.drafts(notice, job: job, driverName: driverName)
        }
    }

    // MARK: Payment calls

    /// Makes the job's owed payment call; a scheduled hold the card refuses cancels the job.
    func settle(_ jobID: String) async {
        if case .holdRefused(let error) = await payments.settle(jobID) { await cancelUnpaid(jobID, error) }
    }

    /// The payment calls that are due (retries and scheduled holds); returns how many were made.
    public func runDuePayments(limit: Int = 50) async throws -> Int {
        let outcomes = try await payments.runDue(limit: limit)
        for (jobID, settled) in outcomes {
            if case .holdRefused(let error) = settled { await cancelUnpaid(jobID, error) }
        }
        return outcomes.count
    }

    /// A job booked ahead whose hold the card refused when it was due: nothing could pay for
    /// it, so it is cancelled (by the system, reason `payment_declined`) before anyone works
    /// on it, and the customer is told to book again with another card. A job already started
    /// or finished is not undone: its payment stays failed for operators (`payment.last_error`).
    func cancelUnpaid(_ jobID: String, _ error: PaymentError) async {
        do {
            let (job, driver) = try await book.job(jobID, for: Identity(userID: JobActor.system.rawValue, role: .service, expiresAt: .infinity))
            guard case .move = JobLifecycle.decide(job, .paymentRefused) else {
                logger.error(
                    "a scheduled payment hold was refused after the job began",
                    metadata: ["job_id": "\(jobID)", "status": "\(job.status.rawValue)", "code": "\(error.code)"])
                return
            }
            let cancelled = try await cancel(job, .paymentRefused, actorID: nil, reason: Self.paymentDeclined, driver: driver)
            // Changed meanwhile (the customer cancelled): nothing left to do here.
            guard cancelled != nil else { return }
            logger.warning("job cancelled: its scheduled payment hold was refused", metadata: ["job_id": "\(jobID)", "code": "\(error.code)"])
        } catch {
            logger.error("cancelling a job whose payment hold was refused failed", metadata: ["job_id": "\(jobID)", "error": "\(String(reflecting: error))"])
        }
    }
}
