import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Sends the Live Activity pushes that are due, on every node: rows are leased like the
/// outbox's (`SKIP LOCKED` on PostgreSQL), so nodes take disjoint rows, and a row whose node
/// died mid-send is due again when its lease ends (the device keeps the newest `timestamp`,
/// so a resend changes nothing).
public final class LiveActivityWorker: Service {
    public struct Settings: Sendable, Equatable {
        public var pollInterval: Duration = .milliseconds(500)
        public var batchSize = 256
        public var leaseMs: Int64 = 60_000
        /// Pushes in flight at once (each one HTTP/2 stream).
        public var concurrency = 128
        public var retry = RetryPolicy(baseMilliseconds: 1_000, maxMilliseconds: 300_000, maxAttempts: 8, maxAgeMilliseconds: 3_600_000)

        public init() {}
    }

    let service: LiveActivityService
    let database: any Database
    let senders: PushSenders
    let clock: any HeraldClock
    let logger: Logger
    let settings: Settings
    private let ready: @Sendable () async -> Bool
    public let statistics = LiveActivityStatistics()
    /// When this node last retired idle channels (epoch ms).
    private let lastChannelSweep = Mutex<Int64>(0)
    static let channelSweepIntervalMs: Int64 = 60_000

    public init(
        service: LiveActivityService, database: any Database, senders: PushSenders, clock: any HeraldClock, logger: Logger,
        settings: Settings = Settings(), ready: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.service = service
        self.database = database
        self.senders = senders
        self.clock = clock
        self.logger = logger
        self.settings = settings
        self.ready = ready
    }

    public func run() async throws {
        guard await ready() else { return }
        let batchSize = settings.batchSize
        await PeriodicLoop.run(
            every: settings.pollInterval, start: .immediately, wake: service.wakeSignal, logger: logger, failure: "live activity round failed"
        ) { while try await self.runOnce() >= batchSize && !Task.isCancelled {} }
    }

    /// Claims the due rows, sends them and records the outcomes; returns how many it claimed.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = clock.now().epochMilliseconds
        let lease = now + settings.leaseMs
        let engine = database.engine
        let store = LiveActivityStore()
        let limit = settings.batchSize
        try await retireIdleChannels(now: now)
        let rows = try await database.transaction { db in try await store.claim(db, engine: engine, now: now, leaseUntil: lease, limit: limit) }
        guard !rows.isEmpty else { return 0 }
        var outcomes: [(id: String, outcome: LiveActivityStore.Outcome, start: LiveActivityRecord?)] = []
        outcomes.reserveCapacity(rows.count)
        for chunkStart in stride(from: 0, to: rows.count, by: settings.concurrency) {
            let chunk = rows[chunkStart..<min(rows.count, chunkStart + settings.concurrency)]
            await withTaskGroup(of: (String, LiveActivityStore.Outcome, LiveActivityRecord?).self) { group in
                for row in chunk {
                    group.addTask { await self.send(row) }
                }
                for await result in group { outcomes.append((result.0, result.1, result.2)) }
            }
        }
        let finished = clock.now().epochMilliseconds
        let routine = service.policy.routineIntervalMs
        let ended = outcomes
        try await database.transaction { db in
            for (id, outcome, start) in ended {
                try await store.finish(db, id: id, lease: lease, outcome: outcome, routineIntervalMs: routine, now: finished)
                if case .gone = outcome, let start { try await store.deleteStartToken(db, appID: start.appID, token: start.token) }
            }
        }
        return rows.count
    }

    /// Channels no app asked for in `channel_idle_seconds` are retired (their deletion at APNs
    /// is then claimed like a push), once a minute on each node.
    private func retireIdleChannels(now: Int64) async throws {
        let due = lastChannelSweep.withLock { last in
            guard now - last >= Self.channelSweepIntervalMs else { return false }
            last = now
            return true
        }
        guard due else { return }
        let cutoff = now - Int64(service.config.channelIdleSeconds) * 1000
        let retired = try await database.withConnection { db in try await LiveActivityStore().retireIdleChannels(db, cutoff: cutoff, now: now) }
        if retired > 0 { logger.info("idle broadcast channels retired", metadata: ["count": "\(retired)"]) }
    }

    /// One push; the outcome to record (and the row, when a start token went away).
    private func send(_ row: LiveActivityRecord) async -> (String, LiveActivityStore.Outcome, LiveActivityRecord?) {
        if row.mode == .channel { return (row.id, await sendChannel(row), nil) }
        let message = service.policy.message(for: row, attributesType: service.config.attributesType(row.kind.rawValue))
        guard let sender = senders.liveActivitySender(app: row.appID, environment: row.environment) else {
            return (row.id, .failed(reason: "no_sender"), nil)
        }
        let result: PushResult
        do {
            result = try await sender.sendLiveActivity(message)
        } catch {
            result = .retryLater(.transport(.sendError), after: nil)
        }
        let now = clock.now().epochMilliseconds
        statistics.record(message, result)
        switch result {
        case .accepted:
            return (row.id, .sent(version: row.version, timestamp: message.timestamp), nil)
        case .tokenGone(let failure):
            return (row.id, .gone(reason: failure.description), row.mode == .start ? row : nil)
        case .refused(let failure):
            logger.warning(
                "a live activity push was refused", metadata: ["live_activity_id": "\(row.id)", "reason": "\(failure.description)"])
            return (row.id, .failed(reason: failure.description), nil)
        case .retryLater(let failure, let after):
            return (row.id, retryOrFail(row, reason: failure.description, after: after, since: row.contentAt, now: now), nil)
        }
    }

    private func retryOrFail(_ row: LiveActivityRecord, reason: String, after: Duration?, since: Int64, now: Int64) -> LiveActivityStore.Outcome {
        let retry = settings.retry
        let delay = retry.delay(
            afterAttempt: row.attempts, retryAfterMilliseconds: after.map { Int64($0.wholeMilliseconds) }, jitter: Double.random(in: 0..<1))
        guard retry.mayRetry(attempts: row.attempts, createdAt: since, retryAt: now + delay) else { return .failed(reason: reason) }
        return .retry(at: now + delay, reason: reason)
    }

    /// A channel row: its newest content as one broadcast, or, once retired, its deletion.
    private func sendChannel(_ row: LiveActivityRecord) async -> LiveActivityStore.Outcome {
        let environment = row.environment ?? senders.environment(app: row.appID)
        guard let broadcaster = senders.liveActivityBroadcaster(app: row.appID, environment: environment) else { return .failed(reason: "no_sender") }
        if row.status != .active {
            let result = await broadcaster.deleteChannel(row.token)
            let now = clock.now().epochMilliseconds
            switch result {
            case .success: return .channelDeleted
            case .failure(let failure) where failure.retryable:
                return retryOrFail(row, reason: failure.reason, after: nil, since: row.updatedAt, now: now)
            case .failure(let failure):
                logger.warning("deleting a broadcast channel was refused", metadata: ["live_activity_id": "\(row.id)", "reason": "\(failure.reason)"])
                return .failed(reason: failure.reason)
            }
        }
        let message = service.policy.message(for: row, attributesType: service.config.attributesType(row.kind.rawValue))
        let result: PushResult
        do {
            result = try await broadcaster.broadcast(message, storage: service.config.channelStorage)
        } catch {
            result = .retryLater(.transport(.sendError), after: nil)
        }
        statistics.record(message, result)
        let now = clock.now().epochMilliseconds
        switch result {
        case .accepted: return .sent(version: row.version, timestamp: message.timestamp)
        case .tokenGone(let failure): return .gone(reason: failure.description)
        case .refused(let failure):
            logger.warning("a live activity broadcast was refused", metadata: ["live_activity_id": "\(row.id)", "reason": "\(failure.description)"])
            return .failed(reason: failure.description)
        case .retryLater(let failure, let after):
            return retryOrFail(row, reason: failure.description, after: after, since: row.contentAt, now: now)
        }
    }
}

/// Live Activity pushes of this node, for `/metrics`.
public final class LiveActivityStatistics: Sendable {
    public struct Key: Hashable, Sendable {
        public var event: String
        public var priority: Int
        public var outcome: String
    }

    private let counts = Mutex<[Key: Int]>([:])

    public init() {}

    func record(_ message: LiveActivityMessage, _ result: PushResult) {
        let outcome =
            switch result {
            case .accepted: "sent"
            case .retryLater: "retry"
            case .tokenGone: "gone"
            case .refused: "failed"
            }
        let key = Key(event: message.event.rawValue, priority: message.important ? 10 : 5, outcome: outcome)
        counts.withLock { $0[key, default: 0] += 1 }
    }

    public var snapshot: [Key: Int] { counts.withLock { $0 } }
}
