import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

/// Sends the push deliveries in the outbox and records each outcome.
///
/// Why claim-then-send with a lease: a delivery is marked `sending` (with a lease) before the
/// provider is called and `sent` only after it answered, so a crash between the two is
/// retried when the lease ends (the same `apns-id`, so the device shows it once), and a
/// crash before the claim loses nothing. On PostgreSQL `FOR UPDATE SKIP LOCKED` lets every
/// node's worker take disjoint rows. Pushes written on this node arrive already claimed
/// through `handoff` and are sent without being read back (`PushHandoff`).
public final class DeliveryWorker: Service, Sendable {
    public struct Settings: Sendable {
        public var concurrency = 32
        public var batchSize = 100
        public var pollInterval: Duration = .milliseconds(500)
        public var lease: Duration = .seconds(60)
        /// Pushes queued in memory by the sends of this node at most (`PushHandoff`); 0: none.
        public var handoffCapacity = 25_000
        public var requestTimeout: Duration = .seconds(10)
        public var retry = RetryPolicy(baseMilliseconds: 1000, maxMilliseconds: 600_000, maxAttempts: 8, maxAgeMilliseconds: 86_400_000)
        public init() {}

        public init(_ config: PushConfig) {
            concurrency = config.concurrency
            batchSize = config.batchSize
            pollInterval = .milliseconds(config.pollIntervalMs)
            lease = .seconds(config.leaseSeconds)
            handoffCapacity = config.handoffCapacity
            requestTimeout = .milliseconds(config.requestTimeoutMs)
            retry = RetryPolicy(
                baseMilliseconds: Int64(config.retryBaseMs), maxMilliseconds: Int64(config.retryMaxMs),
                maxAttempts: config.maxAttempts, maxAgeMilliseconds: Int64(config.maxAgeSeconds) * 1000)
        }
    }

    let database: any Database
    let senders: PushSenders
    let clock: any HeraldClock
    let settings: Settings
    let logger: Logger
    let wakeSignal = WakeSignal()
    private let ready: @Sendable () async -> Bool
    public let statistics = PushStatistics()
    /// Where this node's sends put the pushes they wrote already claimed; nil when
    /// `handoffCapacity` is 0 (every push then goes through the database).
    public let handoff: PushHandoff?
    private let outcomeWriter: GroupCommit<Outcome, Void>

    /// A single-app worker: `senders` by provider (`apns`, `fcm`, `webpush`); `fallback` serves
    /// providers not listed.
    public convenience init(
        database: any Database, senders: [PushProvider: any PushSender], fallback: (any PushSender)?, clock: any HeraldClock,
        settings: Settings, logger: Logger, ready: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.init(
            database: database, senders: PushSenders(byProvider: senders, fallback: fallback), clock: clock, settings: settings, logger: logger,
            ready: ready)
    }

    /// - Parameters:
    ///   - senders: every app's senders (`PushSenders`).
    ///   - ready: waits until the schema exists (false: shutting down before it did).
    public init(
        database: any Database, senders: PushSenders, clock: any HeraldClock, settings: Settings, logger: Logger,
        ready: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.database = database
        self.senders = senders
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.ready = ready
        let wakeSignal = self.wakeSignal
        handoff =
            settings.handoffCapacity > 0
            ? PushHandoff(capacity: settings.handoffCapacity, leaseMilliseconds: settings.lease.wholeMilliseconds) { wakeSignal.signal() } : nil
        let statistics = self.statistics
        self.outcomeWriter = GroupCommit(maxBatch: Self.recordChunk) { outcomes in
            await Self.record(outcomes, database: database, clock: clock, logger: logger, statistics: statistics)
            return Array(repeating: (), count: outcomes.count)
        }
    }

    /// New deliveries were written: look now rather than at the next poll.
    public func wake() { wakeSignal.signal() }

    /// Outcomes so far by status (`sent`, `retry`, `failed`, `dead`, `skipped`), for metrics.
    public var outcomeCounts: [String: Int] { statistics.snapshot.outcomes }

    public func run() async throws {
        guard await ready() else { return }
        // A shutdown cancels the round (a database that stopped answering must not hold the
        // process); a delivery cut off mid-send is retried after its lease. Full batches follow
        // each other without a wait.
        let batchSize = settings.batchSize
        await PeriodicLoop.run(
            every: settings.pollInterval, start: .immediately, wake: wakeSignal, logger: logger, failure: "push delivery round failed"
        ) { while try await self.runOnce() >= batchSize && !Task.isCancelled {} }
        await releaseHandedOver()
    }

    /// On shutdown: pushes handed over but not yet sent go back to the outbox as due now, so
    /// the next node to run sends them at once instead of after their lease. Best effort: rows
    /// this cannot reach (the database is gone too) are sent when their lease ends.
    public func releaseHandedOver() async {
        guard let handoff else { return }
        let left = handoff.take(Int.max).map(\.delivery.id)
        guard !left.isEmpty else { return }
        let now = clock.now().epochMilliseconds
        do {
            try await database.transaction { db in try await DeliveryStore().release(db, ids: left, now: now) }
            logger.info("released unsent pushes to the outbox", metadata: ["deliveries": "\(left.count)"])
        } catch {
            logger.warning(
                "unsent pushes stay claimed until their lease ends", metadata: ["deliveries": "\(left.count)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Sends one batch: the pushes this node's sends handed over (already claimed, their
    /// messages built), then due deliveries claimed from the database for the rest of the
    /// batch; returns how many were sent or claimed.
    ///
    /// The database is asked for at least a quarter of a batch even while handed-over pushes
    /// fill it, so retries and other nodes' pushes are not starved by a long hand-over queue.
    ///
    /// Why whole batches against the database: one statement per delivery per step (find the
    /// notification, the device, count unread, record, mark sent) went one by one through the
    /// database's single writer and capped a node near 1,150 pushes/s on SQLite. Now a batch
    /// is read with three queries and its outcomes are written in a few transactions.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = clock.now().epochMilliseconds
        let leaseUntil = now + settings.lease.wholeMilliseconds
        let batchSize = settings.batchSize
        let handed = handoff?.take(batchSize) ?? []
        let limit = max(batchSize - handed.count, handed.isEmpty ? batchSize : (batchSize + 3) / 4)
        let engine = database.engine
        let countDepth = depthDue(now: now)
        let (claimed, depth) = try await database.transaction { db in
            (
                try await DeliveryStore().claimPush(db, engine: engine, now: now, leaseUntil: leaseUntil, limit: limit),
                countDepth ? try await DeliveryStore().pendingPushCount(db) : nil
            )
        }
        if let depth { statistics.setQueueDepth(depth) }
        guard !claimed.isEmpty || !handed.isEmpty else { return 0 }
        let prepared = handed.map { Self.prepared($0, now: now) } + (claimed.isEmpty ? [] : try await prepare(claimed))
        // A rolling window: as a send ends, the next starts — the batch's own, then pushes
        // handed over meanwhile, up to `handoffPerRound` in all — instead of the whole batch
        // waiting for its slowest send and outcome before the next claim (an alert's pushes
        // then went out in steps of 100, the node idle between them; issue 37).
        let concurrency = settings.concurrency
        let roundLimit = max(prepared.count, Self.handoffPerRound(batchSize))
        // The round as a whole is bounded too (a database that stops answering while the
        // outcomes are written).
        let bound = settings.requestTimeout * ((roundLimit + concurrency - 1) / concurrency) + .seconds(10)
        let started = Mutex(0)
        _ = try? await withDeadline(bound) {
            await withTaskGroup(of: Outcome?.self) { group in
                var queue = prepared[...]
                var (sending, recording, count) = (0, 0, 0)
                while true {
                    while sending < concurrency && recording < Self.recordChunk && count < roundLimit {
                        if queue.isEmpty, let handoff = self.handoff {
                            let now = self.clock.now().epochMilliseconds
                            queue = handoff.take(min(concurrency - sending, roundLimit - count)).map { Self.prepared($0, now: now) }[...]
                        }
                        guard let (delivery, preparation) = queue.popFirst() else { break }
                        group.addTask { await self.attempt(delivery, preparation) }
                        sending += 1
                        count += 1
                    }
                    guard sending + recording > 0, let finished = await group.next() else { break }
                    guard let outcome = finished else {
                        recording -= 1
                        continue
                    }
                    // A send's slot is free once the provider answered; its outcome is written
                    // by the next group commit meanwhile (waiting for it in the slot held every
                    // send for a commit). Recorded as soon as the writer is free, not when a
                    // chunk fills: an accepted push whose record a crash loses is sent again, so
                    // the fewer accepted-but-unrecorded outcomes, the fewer copies.
                    sending -= 1
                    recording += 1
                    group.addTask {
                        try? await self.outcomeWriter.submit(outcome)
                        return nil
                    }
                }
                started.withLock { $0 = count }
            }
        }
        return max(prepared.count, started.withLock { $0 })
    }

    /// Pushes one round sends at most: its claimed batch, then what is handed over while it
    /// runs. Bounded so that the database's due rows (retries, other nodes') are claimed again
    /// between rounds however long the hand-over queue stays full.
    static func handoffPerRound(_ batchSize: Int) -> Int { batchSize * 20 }

    /// A handed-over push as the database path's preparation would have it.
    static func prepared(_ item: PushHandoff.Item, now: Int64) -> (DeliveryRecord, Prepared) {
        if let expiresAt = item.message.expiresAt, expiresAt <= now { return (item.delivery, .skip("expired", type: item.message.type)) }
        return (item.delivery, .send(item.message, createdAt: item.delivery.createdAt))
    }

    /// Outcomes per transaction at most; each transaction takes every outcome that arrived
    /// while the previous one was written (a group commit).
    static let recordChunk = 256

    /// The queue-depth gauge counts every unfinished delivery: at most once a second, not per
    /// batch (on a long queue the count cost as much as the batch).
    private func depthDue(now: Int64) -> Bool {
        lastDepthCount.withLock { last in
            guard now - last >= 1000 || now < last else { return false }
            last = now
            return true
        }
    }

    private let lastDepthCount = Mutex<Int64>(Int64.min / 2)
}
