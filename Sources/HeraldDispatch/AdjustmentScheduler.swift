import HeraldCore
import Logging
import ServiceLifecycle

/// Tells drivers when a customer let a price proposal's deadline pass, and makes the payment
/// calls still owed (after a provider outage or a restart).
///
/// Why poll the database: deadlines and owed calls are columns, so they survive restarts and
/// any node can act on them; the conditional updates let one node act on each. The clock is
/// injected, so tests move time and watch deadlines pass.
public struct AdjustmentScheduler: Service {
    let dispatch: DispatchService
    let interval: Duration
    let ready: @Sendable () async -> Bool

    public init(dispatch: DispatchService, interval: Duration = .seconds(1), ready: @escaping @Sendable () async -> Bool) {
        self.dispatch = dispatch
        self.interval = interval
        self.ready = ready
    }

    public func run() async throws {
        guard await ready() else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    while try await dispatch.expireDueProposals(limit: 100) == 100 {}
                    while try await dispatch.payments.runDue(limit: 50) == 50 {}
                }
            } catch is CancellationError {
                return
            } catch {
                if Task.isShuttingDownGracefully { return }
                dispatch.logger.warning("adjustment scheduler round failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            await cancelWhenGracefulShutdown { await dispatch.adjustmentsChanged.wait(for: interval) }
        }
    }
}
