import HeraldCore
import HeraldStorage
import Logging

/// `herald migrate --wait`: a migration job started beside its database (a compose file, a
/// Kubernetes Job) must not fail because PostgreSQL is still initialising. The pool gives up
/// on a database that refuses connections after its own retries (about 10 s), so the wait
/// asks again until the deadline; 0 seconds asks once, as the command always did.
enum DatabaseWait {
    static func untilAnswering(_ database: any Database, seconds: Int, logger: Logger) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            do {
                try await database.ping()
                return
            } catch {
                guard ContinuousClock.now < deadline, !Task.isCancelled else {
                    if seconds == 0 { throw error }
                    throw MigrationError.databaseUnreachable(seconds: seconds)
                }
                logger.info("the database does not answer yet; trying again", metadata: ["error": "\(error)"])
                try await CancellableSleep.sleep(for: .seconds(1))
            }
        }
    }
}
