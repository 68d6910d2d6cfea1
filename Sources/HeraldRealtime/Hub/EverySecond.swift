import HeraldCore
import ServiceLifecycle

/// Runs `body` once a second until a graceful shutdown (or cancellation) ends the wait.
///
/// Why one helper: the token-expiry sweeps of both protocols (native, Socket.IO) are such
/// loops, and the shutdown handling must be the same in each.
func everySecondUntilShutdown(_ body: () async -> Void) async {
    while !Task.isShuttingDownGracefully && !Task.isCancelled {
        do {
            try await cancelWhenGracefulShutdown { try await CancellableSleep.sleep(for: .seconds(1)) }
        } catch {
            return
        }
        await body()
    }
}
