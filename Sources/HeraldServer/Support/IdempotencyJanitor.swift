import HeraldCore
import HeraldStorage
import Logging
import ServiceLifecycle

/// Deletes expired idempotency keys every few minutes, so the table holds about one day of keys.
struct IdempotencyJanitor: Service {
    let database: any Database
    let clock: any HeraldClock
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let store = IdempotencyStore()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await CancellableSleep.sleep(for: interval) }
            } catch {
                return
            }
            let now = clock.now().epochMilliseconds
            do {
                let purged = try await cancelWhenGracefulShutdown {
                    try await database.withConnection { db in try await store.purgeExpired(db, now: now) }
                }
                if purged > 0 { logger.debug("purged expired idempotency keys", metadata: ["count": "\(purged)"]) }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("purging idempotency keys failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}
