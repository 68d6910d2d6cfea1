import HeraldCore

extension TripService {
    /// Makes ride offer rounds and expiries happen on time: a round's end is
    /// `ride_requests.next_round_at`; the conditional updates let one node do each.
    public func rideScheduler(interval: Duration = .milliseconds(500), ready: @escaping @Sendable () async -> Bool) -> DuePoller {
        DuePoller("ride scheduler", interval: interval, wake: scheduleChanged, logger: logger, ready: ready) {
            while try await self.runDue(limit: 100) == 100 {}
        }
    }
}
