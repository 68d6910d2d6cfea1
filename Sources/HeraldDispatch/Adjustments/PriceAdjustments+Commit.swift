import HeraldCore
import HeraldNotifications
import HeraldPayments
import HeraldStorage

extension PriceAdjustments {
    /// What a committed change left: the adjustment, and the job when the change touched it.
    struct Committed: Sendable {
        var adjustment: AdjustmentRecord
        var job: JobRecord?
    }

    /// The change `event` makes to `current`; nil for a repeat (answer as it stands); throws
    /// the refusal as the routes answer it.
    func change(_ current: AdjustmentRecord?, _ event: AdjustmentLifecycle.Event) throws -> AdjustmentLifecycle.Change? {
        switch AdjustmentLifecycle.decide(current, event) {
        case .move(let change): return change
        case .already: return nil
        case .refused(let refusal): throw Self.error(refusal, current)
        }
    }

    static func error(_ refusal: AdjustmentLifecycle.Refusal, _ current: AdjustmentRecord?) -> APIError {
        switch (refusal, current) {
        case (.notArrived(let status), _): DispatchError.notArrived(status)
        case (.extensionLimit(let max), _): DispatchError.extensionLimit(max)
        case (.alreadyMade, let current?): DispatchError.alreadyMade(current)
        case (.alreadyDecided, let current?): DispatchError.alreadyDecided(current)
        case (.notExpired, let current?): DispatchError.notExpired(current)
        default: DispatchError.noPendingAdjustment
        }
    }

    /// The change's notification about `adjustment` (as the change will leave it), prepared
    /// before the unit of work.
    func prepare(_ change: AdjustmentLifecycle.Change, _ adjustment: AdjustmentRecord) async -> NotificationService.PreparedSend? {
        for case .notify(let notice) in change.effects { return await notifier.prepare(AdjustmentNotices.draft(notice, adjustment)) }
        return nil
    }

    /// Carries out `change` inside `work`: `update` makes the adjustment row's conditional
    /// change (nil: another decision won, and nothing else happens); then the effects inside
    /// the unit of work, in the rule's order; the rest after the commit. `raised` is the hold
    /// the provider raised before the unit of work; `ending` the job's transition when the
    /// change ends the job (decided before, from the job as read).
    func commit(
        _ change: AdjustmentLifecycle.Change, actorID: String, prepared: NotificationService.PreparedSend?, raised: HoldState? = nil,
        ending: JobLifecycle.Transition? = nil, in work: UnitOfWork, now: Int64, update: () async throws -> Committed?
    ) async throws -> Committed? {
        let db = work.db
        guard var committed = try await update() else { return nil }
        let adjustment = committed.adjustment
        let jobID = adjustment.jobID
        // Ending the job writes this change's notice as the job's decision message.
        var notified = false
        for effect in change.effects {
            switch effect {
            case .repriceJob:
                let price = (adjustment.newPriceMinor, adjustment.priceLines, adjustment.actualVolumeHundredths)
                guard let job = try await book.store.touchArrived(db, id: jobID, driverID: nil, price: price, now: now) else { throw Superseded() }
                committed.job = job
            case .keepJobAtDoor:
                guard let job = try await book.store.touchArrived(db, id: jobID, driverID: nil, price: nil, now: now) else { throw Superseded() }
                committed.job = job
            case .planHoldChange: try await holds.plan(db, jobID: jobID, .change(adjustment.newPriceMinor), now: now)
            case .recordRaisedHold: if let raised { try await holds.applied(db, jobID: jobID, raised, settling: nil, now: now) }
            case .endJobWithTripFee(let actor, let reason):
                guard let ending else { throw Superseded() }
                committed.job = try await transitions.commit(
                    ending, jobID: jobID, actorID: actorID, reason: reason, driver: nil, prepared: prepared.map { [$0] } ?? [], in: work, now: now
                ) {
                    guard
                        let cancelled = try await self.book.store.transition(
                            db, id: jobID, from: .arrived, to: .cancelled, driverID: nil, now: now, cancelledBy: actor.rawValue, reason: reason)
                    else { throw Superseded() }
                    return cancelled
                }
                notified = true
            case .notify where !notified:
                try await notifier.write(prepared, in: work)
                notified = true
            default: break
            }
        }
        let afterCommit = change.effects.filter { !$0.runsInsideCommit }
        let job = committed.job
        work.afterCommit { await self.run(afterCommit, adjustment, job: job) }
        return committed
    }

    /// The effects that follow the commit, in the rule's order.
    private func run(_ effects: [AdjustmentEffect], _ adjustment: AdjustmentRecord, job: JobRecord?) async {
        for effect in effects {
            switch effect {
            case .wakeDeadlines: deadlinesChanged.signal()
            case .settlePayment: await transitions.settle(adjustment.jobID)
            case .announce(let announcement): await notifier.publish(batch: AdjustmentNotices.events(announcement, adjustment, job: job))
            default: break  // inside the commit
            }
        }
    }
}
