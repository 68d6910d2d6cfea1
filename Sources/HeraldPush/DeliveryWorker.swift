import Foundation
import HeraldCore
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
/// node's worker take disjoint rows.
public final class DeliveryWorker: Service, Sendable {
    public struct Settings: Sendable {
        public var concurrency = 32
        public var batchSize = 100
        public var pollInterval: Duration = .milliseconds(500)
        public var lease: Duration = .seconds(60)
        public var requestTimeout: Duration = .seconds(10)
        public var retry = RetryPolicy(baseMilliseconds: 1000, maxMilliseconds: 600_000, maxAttempts: 8, maxAgeMilliseconds: 86_400_000)
        public init() {}

        public init(_ config: PushConfig) {
            concurrency = config.concurrency
            batchSize = config.batchSize
            pollInterval = .milliseconds(config.pollIntervalMs)
            lease = .seconds(config.leaseSeconds)
            requestTimeout = .milliseconds(config.requestTimeoutMs)
            retry = RetryPolicy(
                baseMilliseconds: Int64(config.retryBaseMs), maxMilliseconds: Int64(config.retryMaxMs),
                maxAttempts: config.maxAttempts, maxAgeMilliseconds: Int64(config.maxAgeSeconds) * 1000)
        }
    }

    let database: any Database
    let senders: [String: any PushSender]
    let clock: any HeraldClock
    let settings: Settings
    let logger: Logger
    let wakeSignal = WakeSignal()
    private let ready: @Sendable () async -> Bool
    public let statistics = PushStatistics()

    /// - Parameters:
    ///   - senders: by provider (`apns`, `fcm`, `webpush`); `fallback` serves providers not listed.
    ///   - ready: waits until the schema exists (false: shutting down before it did).
    public init(
        database: any Database, senders: [String: any PushSender], fallback: (any PushSender)?, clock: any HeraldClock,
        settings: Settings, logger: Logger, ready: @escaping @Sendable () async -> Bool = { true }
    ) {
        var all = senders
        if let fallback {
            for provider in ["apns", "fcm", "webpush"] where all[provider] == nil { all[provider] = fallback }
        }
        self.database = database
        self.senders = all
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.ready = ready
    }

    /// New deliveries were written: look now rather than at the next poll.
    public func wake() { wakeSignal.signal() }

    /// Outcomes so far by status (`sent`, `retry`, `failed`, `dead`, `skipped`), for metrics.
    public var outcomeCounts: [String: Int] { statistics.snapshot.outcomes }

    public func run() async throws {
        guard await ready() else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var claimed = 0
            do {
                // A shutdown cancels the round (a database that stopped answering must not hold
                // the process); a delivery cut off mid-send is retried after its lease.
                claimed = try await cancelWhenGracefulShutdown { try await self.runOnce() }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("push delivery round failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            if claimed < settings.batchSize {
                await cancelWhenGracefulShutdownOrSignal(settings.pollInterval)
            }
        }
    }

    private func cancelWhenGracefulShutdownOrSignal(_ interval: Duration) async {
        await cancelWhenGracefulShutdown { await self.wakeSignal.wait(for: interval) }
    }

    /// Claims one batch of due deliveries and sends them; returns how many were claimed.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = clock.now().epochMilliseconds
        let leaseUntil = now + settings.lease.wholeMilliseconds
        let limit = settings.batchSize
        let engine = database.engine
        let (claimed, depth) = try await database.transaction { db in
            (
                try await DeliveryStore().claimPush(db, engine: engine, now: now, leaseUntil: leaseUntil, limit: limit),
                try await DeliveryStore().pendingPushCount(db)
            )
        }
        statistics.setQueueDepth(depth)
        guard !claimed.isEmpty else { return 0 }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for delivery in claimed {
                if running >= settings.concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask {
                    // One delivery's whole turn (read, send, record) is bounded too.
                    let bound = self.settings.requestTimeout + .seconds(10)
                    _ = try? await withDeadline(bound) { await self.process(delivery) }
                }
                running += 1
            }
        }
        return claimed.count
    }

    enum Prepared {
        case send(PushMessage, createdAt: Int64)
        case skip(String)
    }

    func process(_ delivery: DeliveryRecord) async {
        do {
            switch try await prepare(delivery) {
            case .skip(let reason):
                try await finish(delivery, status: "skipped", reason: reason)
            case .send(let message, let createdAt):
                try await send(message, delivery: delivery, createdAt: createdAt)
            }
        } catch {
            logger.error("push delivery failed to record", metadata: ["delivery_id": "\(delivery.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Reads what the push says from the notification and the device, as they are now.
    func prepare(_ delivery: DeliveryRecord) async throws -> Prepared {
        let now = clock.now().epochMilliseconds
        return try await database.withConnection { db -> Prepared in
            guard let notification = try await NotificationStore().find(db, id: delivery.notificationID, userID: nil) else {
                return .skip("notification_missing")
            }
            if notification.deletedAt != nil { return .skip("notification_deleted") }
            if notification.readAt != nil { return .skip("already_read") }
            if let expiresAt = notification.expiresAt, expiresAt <= now { return .skip("expired") }
            guard let deviceID = delivery.deviceID, let device = try await DeviceStore().find(db, id: deviceID) else {
                return .skip("device_missing")
            }
            guard device.isActive, device.userID == notification.userID else { return .skip("device_inactive") }
            let badge = try await NotificationStore().unreadCount(db, userID: notification.userID)
            var data: [String: JSONValue] = [:]
            if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(notification.data.utf8)) {
                data = object
            }
            data["notification_id"] = .string(notification.id)
            data["type"] = .string(notification.type)
            let message = PushMessage(
                deliveryID: delivery.id, notificationID: notification.id, userID: notification.userID, deviceID: device.id,
                type: notification.type, severity: notification.severity, provider: device.provider, platform: device.platform,
                token: device.token, webpushP256dh: device.webpushP256dh, webpushAuth: device.webpushAuth, title: notification.title,
                body: notification.body, data: .object(data), category: notification.category, threadID: notification.threadID,
                collapseKey: notification.collapseKey, interruptionLevel: notification.interruptionLevel, badge: badge,
                expiresAt: notification.expiresAt, attempt: delivery.attempts, silent: notification.silent != 0,
                deviceUpdatedAt: device.lastUsedAt)
            return .send(message, createdAt: delivery.createdAt)
        }
    }

    func send(_ message: PushMessage, delivery: DeliveryRecord, createdAt: Int64) async throws {
        guard let sender = senders[message.provider] else {
            try await finish(delivery, status: "dead", reason: "no_sender_for_provider")
            return
        }
        let started = ContinuousClock.now
        let result: PushResult
        do {
            result = try await withDeadline(settings.requestTimeout) { try await sender.send(message) }
        } catch is DeadlineExceeded {
            result = .retry(reason: "timeout", after: nil)
        } catch {
            result = .retry(reason: "send_error", after: nil)
        }
        let elapsed = ContinuousClock.now - started
        let latency = Int(elapsed.wholeMilliseconds)
        switch result {
        case .delivered(let id):
            try await finish(delivery, status: "sent", providerMessageID: id, latency: latency)
            try await database.withConnection { db in
                try await NotificationStore().markSentViaPushIfUnset(db, id: message.notificationID)
            }
        case .retry(let reason, let after):
            let now = clock.now().epochMilliseconds
            let delay = settings.retry.delay(
                afterAttempt: delivery.attempts, retryAfterMilliseconds: after.map(\.wholeMilliseconds), jitter: Double.random(in: 0..<1))
            if settings.retry.mayRetry(attempts: delivery.attempts, createdAt: createdAt, retryAt: now + delay) {
                try await finish(delivery, status: "pending", reason: reason, latency: latency, retryAt: now + delay)
            } else {
                try await finish(delivery, status: "dead", reason: "gave_up: \(reason)", latency: latency)
            }
        case .tokenGone(let reason):
            let now = clock.now().epochMilliseconds
            try await database.transaction { db in
                try await DeviceStore().deactivate(db, id: message.deviceID, reason: reason, now: now)
                _ = try await DeliveryStore().finishAttempt(
                    db, id: delivery.id, status: "failed", providerMessageID: nil, reason: reason, latencyMs: latency, retryAt: nil, now: now)
            }
            count("failed", reason: reason, latency: latency)
        case .failed(let reason):
            try await finish(delivery, status: "dead", reason: reason, latency: latency)
        }
    }

    private func finish(
        _ delivery: DeliveryRecord, status: String, providerMessageID: String? = nil, reason: String?, latency: Int? = nil,
        retryAt: Int64? = nil
    ) async throws {
        let now = clock.now().epochMilliseconds
        try await database.withConnection { db in
            _ = try await DeliveryStore().finishAttempt(
                db, id: delivery.id, status: status, providerMessageID: providerMessageID, reason: reason, latencyMs: latency,
                retryAt: retryAt, now: now)
        }
        count(status == "pending" ? "retry" : status, reason: reason, latency: latency)
    }

    private func finish(_ delivery: DeliveryRecord, status: String, providerMessageID: String?, latency: Int) async throws {
        try await finish(delivery, status: status, providerMessageID: providerMessageID, reason: nil, latency: latency)
    }

    private func count(_ outcome: String, reason: String?, latency: Int?) {
        statistics.record(outcome: outcome, reason: reason, latencyMs: latency)
    }
}
