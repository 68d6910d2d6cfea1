import HeraldCore
import Logging
import ServiceLifecycle

/// Keeps the spatial index and the database in step.
///
/// Every interval it writes the positions this node received since the last time (one
/// transaction, newest per driver), and on PostgreSQL reads what other nodes wrote (profiles,
/// approvals, online changes and positions) since its watermark, with a few seconds of
/// overlap so a transaction that committed late is not missed. At start it loads every
/// approved online driver. At shutdown it writes what is left.
public struct DriverIndexSync: Service {
    let dispatch: DispatchService
    let interval: Duration
    let pullsChanges: Bool
    let ready: @Sendable () async -> Bool

    public init(dispatch: DispatchService, interval: Duration, pullsChanges: Bool, ready: @escaping @Sendable () async -> Bool) {
        self.dispatch = dispatch
        self.interval = interval
        self.pullsChanges = pullsChanges
        self.ready = ready
    }

    public func run() async throws {
        guard await ready() else { return }
        let rebuiltAt = dispatch.now
        do {
            let loaded = try await cancelWhenGracefulShutdown { try await dispatch.drivers.rebuildIndex() }
            dispatch.logger.info("driver index rebuilt", metadata: ["drivers": "\(loaded)"])
        } catch {
            dispatch.logger.error("rebuilding the driver index failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        // A database that stopped answering must not hold up a shutdown: the round is
        // cancelled (unwritten positions stay dirty for the final flush).
        let pulls = pullsChanges
        let sync = self
        await PeriodicLoop.run(
            every: interval, start: .afterInterval, logger: dispatch.logger, failure: "driver index sync failed", carrying: rebuiltAt
        ) { watermark in
            await sync.flush()
            return pulls ? await sync.pull(since: watermark) : watermark
        }
        // The last positions get a bounded try: a lost write costs one report, a hang costs the
        // whole shutdown.
        _ = try? await withDeadline(.seconds(3)) { await self.flush() }
    }

    /// Writes the positions received since the last flush; returns how many.
    @discardableResult
    public func flush() async -> Int {
        let writes = dispatch.drivers.tracker.takeDirty()
        guard !writes.isEmpty else { return 0 }
        do {
            let store = DriverStore()
            try await dispatch.database.transaction { db in
                try await store.writeLocations(db, writes.sorted { $0.driverID < $1.driverID })
            }
            return writes.count
        } catch {
            dispatch.drivers.tracker.restoreDirty(writes)
            dispatch.logger.warning(
                "writing driver locations failed; will retry", metadata: ["count": "\(writes.count)", "error": "\(String(reflecting: error))"])
            return 0
        }
    }

    func pull(since watermark: Int64) async -> Int64 {
        var newest = watermark
        do {
            let store = DriverStore()
            let changed = try await dispatch.database.withConnection { db in
                try await store.changed(db, since: watermark - 5_000, limit: 100_000)
            }
            for record in changed {
                dispatch.drivers.tracker.load(record)
                newest = max(newest, record.updatedAt)
            }
        } catch {
            dispatch.logger.warning("reading driver changes failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        return newest
    }
}
