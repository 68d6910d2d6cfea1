import HeraldCore

extension DispatchService {
    /// Makes offer rounds and expiries happen on time, on any node: a round's
    /// end is `jobs.next_round_at`; the conditional update in `JobOfferRounds.run` lets one node do each.
    public func offerScheduler(interval: Duration = .milliseconds(500), ready: @escaping @Sendable () async -> Bool) -> DuePoller {
        DuePoller("offer scheduler", interval: interval, wake: scheduleChanged, logger: logger, ready: ready) {
            while try await self.offers.runDue(limit: 100) == 100 {}
        }
    }

    /// Tells drivers when a customer let a price proposal's deadline pass, and makes the
    /// payment calls still owed (after a provider outage or a restart).
    public func adjustmentScheduler(interval: Duration = .seconds(1), ready: @escaping @Sendable () async -> Bool) -> DuePoller {
        DuePoller("adjustment scheduler", interval: interval, wake: adjustmentsChanged, logger: logger, ready: ready) {
            while try await self.adjustmentEndings.expireDueProposals(limit: 100) == 100 {}
            while try await self.transitions.runDuePayments(limit: 50) == 50 {}
        }
    }
}
