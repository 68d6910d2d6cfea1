import HeraldCore
import HeraldIdempotency
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
        let (database, clock, logger) = (database, clock, logger)
        await PeriodicLoop.run(every: interval, start: .afterInterval, logger: logger, failure: "purging idempotency keys failed") {
            let now = clock.now().epochMilliseconds
            let purged = try await database.withConnection { db in try await IdempotencyStore().purgeExpired(db, now: now) }
            if purged > 0 { logger.debug("purged expired idempotency keys", metadata: ["count": "\(purged)"]) }
        }
    }
}
