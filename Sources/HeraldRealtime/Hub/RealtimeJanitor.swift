import HeraldCore
import Logging
import SQLKit
import ServiceLifecycle

/// Trims realtime history once a minute (recoverable sessions expire in their own store).
///
/// Why here: the history tables are the realtime module's; the server only
/// schedules the janitor with the configured retention.
public struct RealtimeJanitor: Service {
    let hub: RealtimeHub
    let retention: Duration
    let maxPerRoom: Int
    let interval: Duration
    let logger: Logger

    public init(hub: RealtimeHub, retention: Duration, maxPerRoom: Int, interval: Duration, logger: Logger) {
        self.hub = hub
        self.retention = retention
        self.maxPerRoom = maxPerRoom
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let (hub, retention, maxPerRoom) = (hub, retention, maxPerRoom)
        await PeriodicLoop.run(every: interval, start: .afterInterval, logger: logger, failure: "trimming realtime history failed") {
            let now = hub.clock.now().epochMilliseconds
            let before = now - retention.components.seconds * 1000
            _ = try await hub.database.withConnection { db in
                try await RealtimeEventStore().trim(db, before: before, keepPerRoom: maxPerRoom)
            }
        }
    }
}
