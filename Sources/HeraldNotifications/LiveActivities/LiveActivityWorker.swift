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

    /// One push; the outcome to record (and the row, when a start token went away).
    private func send(_ row: LiveActivityRecord) async -> (String, LiveActivityStore.Outcome, LiveActivityRecord?) {
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
            let retry = settings.retry
            let delay = retry.delay(
                afterAttempt: row.attempts, retryAfterMilliseconds: after.map { Int64($0.wholeMilliseconds) }, jitter: Double.random(in: 0..<1))
            guard retry.mayRetry(attempts: row.attempts, createdAt: row.contentAt, retryAt: now + delay) else {
                return (row.id, .failed(reason: failure.description), nil)
            }
            return (row.id, .retry(at: now + delay, reason: failure.description), nil)
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
