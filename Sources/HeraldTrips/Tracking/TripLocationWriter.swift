import HeraldCore
import HeraldRealtime
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Carries judged samples to riders and to the audit trail, many at a time.
///
/// Why a queue and group commits: every shared sample is a persisted realtime event (so a
/// rider who reconnects gets the missed ones), and thousands of trips each send one a
/// second. One writer takes whatever accumulated while its previous commit ran and publishes
/// it as one batch, then appends the samples to the trail in one transaction; under load the
/// batches grow and the commits per sample shrink, at idle a sample goes out at once. A
/// sample's events keep their order (one writer, one queue). A crash loses at most the
/// samples of the batch in flight, never a trip state change (those are published directly).
public final class TripLocationWriter: Service, Sendable {
    struct Pending {
        var events: [TrackedEvent] = []
        var rows: [TripLocationRow] = []
    }

    let hub: RealtimeHub
    let database: any Database
    let logger: Logger
    private let pending = Mutex(Pending())
    private let wake = WakeSignal()
    /// One batch at a time, so a caller's flush also waits for the batch in flight.
    private let gate = AsyncSerialGate()
    /// The most samples written per commit.
    let maxBatch = 2_000

    /// Opens when the trail's table exists: `run` waits for it.
    let schemaReady: StartupGate

    public init(hub: RealtimeHub, database: any Database, logger: Logger, schemaReady: StartupGate = StartupGate(open: true)) {
        self.schemaReady = schemaReady
        self.hub = hub
        self.database = database
        self.logger = logger
    }

    /// How much may wait when the database cannot keep up: beyond it the oldest half is
    /// dropped (a rider is better served by the newest position than by a minute-old queue,
    /// and memory stays bounded).
    let maxQueuedEvents = 50_000
    let maxQueuedRows = 200_000

    public func enqueue(events: [TrackedEvent], row: TripLocationRow) {
        let dropped = pending.withLock { p -> (events: Int, rows: Int) in
            p.events.append(contentsOf: events)
            p.rows.append(row)
            var dropped = (events: 0, rows: 0)
            if p.events.count > maxQueuedEvents {
                dropped.events = p.events.count / 2
                p.events.removeFirst(dropped.events)
            }
            if p.rows.count > maxQueuedRows {
                dropped.rows = p.rows.count / 2
                p.rows.removeFirst(dropped.rows)
            }
            return dropped
        }
        if dropped.events > 0 || dropped.rows > 0 {
            logger.error(
                "trip location queue overflowed; dropped the oldest",
                metadata: ["events": "\(dropped.events)", "trail_rows": "\(dropped.rows)"])
        }
        wake.signal()
    }

    public var queued: Int { pending.withLock { $0.rows.count + $0.events.count } }

    public func run() async throws {
        guard await schemaReady.wait() else { return }
        await PeriodicLoop.run(
            every: .milliseconds(500), start: .afterInterval, wake: wake, cancellingRound: false, logger: logger, failure: "location flush failed"
        ) { while await self.flushOnce() > 0 && !Task.isCancelled {} }
        _ = try? await withDeadline(.seconds(3)) { while await self.flushOnce() > 0 {} }
    }

    /// Publishes and writes what is queued (up to a batch), after any batch in flight;
    /// returns how many items it took.
    @discardableResult
    public func flushOnce() async -> Int {
        (try? await gate.run { await self.writeBatch() }) ?? 0
    }

    private func writeBatch() async -> Int {
        let batch = pending.withLock { p -> Pending in
            var taken = Pending()
            // Swapping the arrays is the common case; only a backlog is cut (a shift of what stays).
            if p.events.count <= maxBatch {
                swap(&taken.events, &p.events)
            } else {
                taken.events = Array(p.events.prefix(maxBatch))
                p.events.removeFirst(maxBatch)
            }
            if p.rows.count <= maxBatch {
                swap(&taken.rows, &p.rows)
            } else {
                taken.rows = Array(p.rows.prefix(maxBatch))
                p.rows.removeFirst(maxBatch)
            }
            return taken
        }
        if !batch.events.isEmpty {
            do {
                try await hub.publish(batch: batch.events.map { (name: $0.name, payload: $0.payload, room: $0.room) })
            } catch {
                logger.error("publishing driver locations failed", metadata: ["events": "\(batch.events.count)", "error": "\(String(reflecting: error))"])
            }
        }
        if !batch.rows.isEmpty {
            let store = TripLocationStore()
            do {
                try await database.transaction { db in try await store.insert(db, batch.rows) }
            } catch {
                logger.error("writing trip locations failed", metadata: ["rows": "\(batch.rows.count)", "error": "\(String(reflecting: error))"])
            }
        }
        return batch.events.count + batch.rows.count
    }
}

/// A realtime event the writer publishes.
public struct TrackedEvent: Sendable {
    public var room: String
    public var name: String
    public var payload: JSONValue
}
