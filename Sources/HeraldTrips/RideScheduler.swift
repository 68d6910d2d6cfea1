import HeraldCore
import ServiceLifecycle

/// Makes ride offer rounds and expiries happen on time.
///
/// Why poll the database: a round's end is a column (`ride_requests.next_round_at`), so it
/// survives restarts and any node can act; the conditional updates let one node do each.
public struct RideScheduler: Service {
    let trips: TripService
    let interval: Duration
    let ready: @Sendable () async -> Bool

    public init(trips: TripService, interval: Duration = .milliseconds(500), ready: @escaping @Sendable () async -> Bool) {
        self.trips = trips
        self.interval = interval
        self.ready = ready
    }

    public func run() async throws {
        guard await ready() else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                while try await cancelWhenGracefulShutdown({ try await trips.runDue(limit: 100) }) == 100 {}
            } catch is CancellationError {
                return
            } catch {
                trips.logger.warning("ride scheduler round failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            await cancelWhenGracefulShutdown { await trips.scheduleChanged.wait(for: interval) }
        }
    }
}
