import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldStorage

/// What the job's parties ask for after the claim: the driver's next step, and a cancel by
/// the customer (before the driver arrives) or an operator (at any time before it ends).
///
/// Why answers are read again after a lost race: a step or cancel that found the job changed
/// under it answers from what won (the same step again is a repeat, not a 409).
public final class JobSteps: Sendable {
    let book: JobBook
    let transitions: JobTransitions
    let adjustments = AdjustmentStore()

    init(book: JobBook, transitions: JobTransitions) {
        self.book = book
        self.transitions = transitions
    }

    /// Cancels a job. Offered drivers' feeds drop it; the other party is told.
    public func cancel(_ id: String, by identity: Identity, reason: String?) async throws -> JobRecord {
        let actor: JobActor = identity.role == .customer ? .customer : .operator
        guard identity.role == .customer || identity.role == .operator || identity.role == .service else {
            throw APIError.forbidden("Drivers cannot cancel jobs here.")
        }
        let (job, driver) = try await book.job(id, for: identity)
        switch JobLifecycle.decide(job, .cancel(by: actor)) {
        case .already: return job
        case .refused(let allowed): throw DispatchError.invalidTransition(from: job.status, to: "cancelled", allowed: allowed)
        case .move: break
        }
        guard let updated = try await transitions.cancel(job, .cancel(by: actor), actorID: identity.userID, reason: reason, driver: driver) else {
            // Changed under us: answer from the new state.
            let (fresh, _) = try await book.job(id, for: identity)
            if fresh.status == .cancelled { return fresh }
            throw DispatchError.invalidTransition(
                from: fresh.status, to: "cancelled", allowed: JobStateMachine.allowedTransitions(from: fresh.status, by: actor))
        }
        return updated
    }

    /// The assigned driver's next step (`en_route`, `arrived`, `started`, `completed`).
    public func advance(_ id: String, driverID: String, to target: String) async throws -> JobRecord {
        guard let to = JobStatus(rawValue: target), [.enRoute, .arrived, .started, .completed].contains(to) else {
            throw APIError.validation(field: "status", "must be en_route, arrived, started or completed")
        }
        let asDriver = Identity(userID: driverID, role: .driver, expiresAt: .infinity)
        let (job, driver) = try await book.job(id, for: asDriver)
        guard job.driverID == driverID else { throw DispatchError.jobNotFound }
        let transition: JobLifecycle.Transition
        switch JobLifecycle.decide(job, .step(to)) {
        case .already: return job
        case .refused(let allowed): throw DispatchError.invalidTransition(from: job.status, to: to.rawValue, allowed: allowed)
        case .move(let move): transition = move
        }
        let now = transitions.now
        let prepared = await transitions.notifier.prepare(transitions.drafts(transition, job: job, driverName: driver?.name))
        let result = try await book.database.unitOfWork { work -> JobRecord? in
            // Lock first, then decide in a new statement: `started` must see a proposal committed
            // while this waited (on PostgreSQL the UPDATE's subquery would not).
            if to == .started { try await self.book.store.lock(work.db, id: id) }
            return try await self.transitions.commit(
                transition, jobID: id, actorID: driverID, driver: driver, prepared: prepared, in: work, now: now
            ) {
                try await self.book.store.transition(work.db, id: id, from: transition.from, to: to, driverID: driverID, now: now)
            }
        }
        guard let updated = result else {
            let (fresh, _) = try await book.job(id, for: asDriver)
            if fresh.status == to { return fresh }
            if to == .started, fresh.status == .arrived,
                try await book.database.withConnection({ db in try await self.adjustments.find(db, jobID: id) })?.status == .pending
            {
                throw DispatchError.adjustmentPending
            }
            throw DispatchError.invalidTransition(
                from: fresh.status, to: to.rawValue, allowed: JobStateMachine.allowedTransitions(from: fresh.status, by: .driver))
        }
        // A job booked ahead whose driver sets off before its hold's time takes it now: the
        // work is about to be done and must be payable.
        if transition.effects.contains(.takeScheduledHold), case .holdRefused(let error) = await transitions.payments.takeScheduledNow(id) {
            await transitions.cancelUnpaid(id, error)
            return try await book.job(id, for: asDriver).job
        }
        return updated
    }
}
