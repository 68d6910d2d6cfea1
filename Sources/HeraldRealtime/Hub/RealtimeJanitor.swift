import HeraldCore
import Logging
import ServiceLifecycle
import SQLKit

/// Trims realtime history and forgets expired recoverable sessions, once a minute.
///
/// Why here: the history and session tables are the realtime module's; the server only
/// schedules the janitor with the configured retention.
public struct RealtimeJanitor: Service {
    let hub: RealtimeHub
    let retention: Duration
    let maxPerRoom: Int
    let recoveryWindow: Duration
    let interval: Duration
    let logger: Logger

    public init(hub: RealtimeHub, retention: Duration, maxPerRoom: Int, recoveryWindow: Duration, interval: Duration, logger: Logger) {
        self.hub = hub
        self.retention = retention
        self.maxPerRoom = maxPerRoom
        self.recoveryWindow = recoveryWindow
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        let (hub, retention, recoveryWindow, maxPerRoom) = (hub, retention, recoveryWindow, maxPerRoom)
        await PeriodicLoop.run(every: interval, start: .afterInterval, logger: logger, failure: "trimming realtime history failed") {
            let now = hub.clock.now().epochMilliseconds
            let before = now - retention.components.seconds * 1000
            let sessionsBefore = now - recoveryWindow.components.seconds * 1000
            try await hub.database.withConnection { db in
                try await RealtimeEventStore().trim(db, before: before, keepPerRoom: maxPerRoom)
                try await db.raw("DELETE FROM realtime_sessions WHERE updated_at < \(bind: sessionsBefore)").run()
            }
        }
    }
}
