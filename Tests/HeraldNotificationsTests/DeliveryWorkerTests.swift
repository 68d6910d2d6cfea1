import Foundation
import HeraldCore
@_spi(Storage) import HeraldNotifications
import HeraldPush
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

@Suite struct DeliveryWorkerTests {
    func delivery(_ h: NotificationHarness, _ notificationID: String) async throws -> DeliveryRecord {
        try #require(try await h.deliveries(notificationID).first)
    }

    @Test func answersAreClassified() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let sender = ScriptedSender([
                .tokenGone(.apns(.unregistered)), .refused(.apns(.badTopic)), .retryLater(.apns(.tooManyRequests), after: .seconds(120)),
            ])
            let h = NotificationHarness(database: database, sender: sender)
            let gone = try await h.device("ann")
            let n1 = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            #expect(try await h.worker.runOnce() == 1)
            #expect(try await delivery(h, n1.id).status == .failed)
            let device = try await database.withConnection { db in try await DeviceStore().find(db, id: gone.id) }
            #expect(device?.isActive == false && device?.deactivationReason == "Unregistered")
            // A deactivated device is never sent to again.
            let n0 = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(n0.pushDeliveries == 0)

            try await h.device("bob")
            let n2 = try #require(try await h.service.send(h.draft(["bob"])).first).notification
            #expect(try await h.worker.runOnce() == 1)
            let dead = try await delivery(h, n2.id)
            #expect(dead.status == .dead && dead.reason == "BadTopic")

            try await h.device("cat")
            let n3 = try #require(try await h.service.send(h.draft(["cat"])).first).notification
            let start = h.clock.now().epochMilliseconds
            #expect(try await h.worker.runOnce() == 1)
            let retry = try await delivery(h, n3.id)
            // Retry-After (120 s) is longer than the first backoff (~1 s): it wins.
            #expect(retry.status == .pending && retry.attempts == 1 && retry.reason == "TooManyRequests")
            #expect(retry.nextAttemptAt >= start + 120_000)
            h.clock.advance(by: 119)
            #expect(try await h.worker.runOnce() == 0)
            h.clock.advance(by: 2)
            #expect(try await h.worker.runOnce() == 1)
            let done = try await delivery(h, n3.id)
            #expect(done.status == .sent && done.attempts == 2)
        }
    }

    @Test func aProviderThatDoesNotAnswerCostsOneDeadlineAndIsRetried() async throws {
        try await TestDatabase.with(.sqlite) { database in
            // The sender would take an hour: only the worker's deadline (300 ms, and its own
            // bound a second later) can end the send, and the row says so. No bound on the
            // elapsed time: a loaded two-core machine delays any timer by seconds.
            let h = NotificationHarness(database: database, sender: ScriptedSender(delay: .seconds(3600)), requestTimeout: .milliseconds(300))
            try await h.device("ann")
            let n = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            #expect(try await h.worker.runOnce() == 1)
            #expect(h.sender.sent.isEmpty)
            let row = try await delivery(h, n.id)
            #expect(row.status == .pending && row.reason == "timeout")
        }
    }

    @Test func retriesStopAtTheAttemptLimit() {
        let policy = RetryPolicy(baseMilliseconds: 1000, maxMilliseconds: 60_000, maxAttempts: 3, maxAgeMilliseconds: 3_600_000)
        #expect(policy.delay(afterAttempt: 1, retryAfterMilliseconds: nil, jitter: 0.5) == 1000)
        #expect(policy.delay(afterAttempt: 3, retryAfterMilliseconds: nil, jitter: 0.5) == 4000)
        #expect(policy.delay(afterAttempt: 20, retryAfterMilliseconds: nil, jitter: 0.5) == 60_000)
        #expect(policy.delay(afterAttempt: 1, retryAfterMilliseconds: nil, jitter: 0) == 800)
        #expect(policy.delay(afterAttempt: 1, retryAfterMilliseconds: nil, jitter: 0.999) == 1200)
        #expect(policy.delay(afterAttempt: 1, retryAfterMilliseconds: 30_000, jitter: 0.5) == 30_000)
        #expect(policy.mayRetry(attempts: 2, createdAt: 0, retryAt: 10_000))
        #expect(!policy.mayRetry(attempts: 3, createdAt: 0, retryAt: 10_000))
        #expect(!policy.mayRetry(attempts: 1, createdAt: 0, retryAt: 3_600_001))
    }

    @Test func readOrExpiredNotificationsAreSkipped() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database)
            try await h.device("ann")
            let read = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            _ = try await h.inbox.markRead(userID: "ann", id: read.id)
            var short = h.draft(["ann"])
            short.ttlSeconds = 10
            let expiring = try #require(try await h.service.send(short).first).notification
            h.clock.advance(by: 11)
            #expect(try await h.worker.runOnce() == 2)
            #expect(try await delivery(h, read.id).reason == "already_read")
            #expect(try await delivery(h, expiring.id).reason == "expired")
            #expect(h.sender.sent.isEmpty)
        }
    }

    /// Two workers on one PostgreSQL share the outbox without sending anything twice.
    @Test func concurrentWorkersClaimDisjointDeliveries() async throws {
        try await TestDatabase.with(.postgres) { database in
            let h = NotificationHarness(database: database, sender: ScriptedSender(delay: .milliseconds(2)))
            for index in 0..<20 { try await h.device("user\(index)") }
            _ = try await h.service.send(NotificationDraft(userIDs: (0..<20).map { "user\($0)" }, type: "trip_update", title: "Hi"))
            _ = try await h.service.send(NotificationDraft(userIDs: (0..<20).map { "user\($0)" }, type: "job_update", title: "Hi"))
            var settings = DeliveryWorker.Settings.patient
            settings.batchSize = 7
            let other = DeliveryWorker(
                database: database, senders: [:], fallback: h.sender, clock: h.clock, settings: settings, logger: TestDatabase.logger)
            let first = DeliveryWorker(
                database: database, senders: [:], fallback: h.sender, clock: h.clock, settings: settings, logger: TestDatabase.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in [first, other] {
                    group.addTask { while try await worker.runOnce() > 0 {} }
                }
                try await group.waitForAll()
            }
            let ids = h.sender.sent.map(\.deliveryID)
            #expect(ids.count == 40)
            #expect(Set(ids).count == 40)
        }
    }
}

/// Answers by device token, whatever order a batch's concurrent sends arrive in.
final class ByTokenSender: PushSender {
    let gone: Set<String>
    private let sentMessages = Mutex<[PushMessage]>([])

    init(gone: Set<String>) { self.gone = gone }

    func send(_ message: PushMessage) async throws -> PushResult {
        sentMessages.withLock { $0.append(message) }
        return gone.contains(message.token) ? .tokenGone(.apns(.unregistered)) : .accepted(providerMessageID: "pm-\(message.deliveryID)")
    }

    var sent: [PushMessage] { sentMessages.withLock { $0 } }
}

@Suite struct DeliveryWorkerBatchTests {
    @Test(arguments: TestEngine.allCases)
    func aWholeBatchIsReadAndRecordedTogether(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let probe = NotificationHarness(database: database)
            let annPhone = try await probe.device("ann")
            let annTablet = try await probe.device("ann")
            let bobPhone = try await probe.device("bob")
            let sender = ByTokenSender(gone: [annTablet.token])
            let worker = DeliveryWorker(
                database: database, senders: [:], fallback: sender, clock: probe.clock, settings: .patient,
                logger: TestDatabase.logger)
            let both = try await probe.service.send(probe.draft(["ann", "bob"])).map(\.notification)
            let first = try #require(both.first { $0.userID == "ann" })
            let bobsFirst = try #require(both.first { $0.userID == "bob" })
            let bobsSecond = try #require(try await probe.service.send(probe.draft(["bob"])).first).notification
            let read = try #require(try await probe.service.send(probe.draft(["ann"])).first).notification
            let now = probe.clock.now().epochMilliseconds
            _ = try await database.withConnection { db in try await NotificationStore().markRead(db, userID: "ann", ids: [read.id], now: now) }

            // ann: 2 devices × 2 notifications, bob: 1 device × 2 notifications (one fan-out row each).
            let claimed = try await worker.runOnce()
            #expect(claimed == 6)
            let ann = try await probe.deliveries(first.id)
            #expect(Set(ann.map(\.status)) == [.sent, .failed])
            #expect(ann.first { $0.deviceID == annTablet.id }?.reason == "Unregistered")
            #expect(ann.first { $0.deviceID == annPhone.id }?.providerMessageID?.hasPrefix("pm-") == true)
            #expect(try await probe.deliveries(bobsFirst.id).first?.status == .sent)
            #expect(try await probe.deliveries(bobsSecond.id).first { $0.deviceID == bobPhone.id }?.status == .sent)
            let skipped = try await probe.deliveries(read.id)
            #expect(skipped.count == 2 && skipped.allSatisfy { $0.status == .skipped && $0.reason == "already_read" })
            // The tablet's token is gone: deactivated in the same transaction as its outcome.
            let tablet = try await database.withConnection { db in try await DeviceStore().find(db, id: annTablet.id) }
            #expect(tablet?.isActive == false)
            // Badges are each user's unread count when the batch was read: ann 1 (one read), bob 2.
            let badges = Dictionary(sender.sent.map { ($0.userID, $0.badge) }, uniquingKeysWith: { a, b in max(a, b) })
            #expect(badges == ["ann": 1, "bob": 2])
            #expect(sender.sent.count == 4)
            for notification in [first, bobsFirst, bobsSecond] {
                let row = try await database.withConnection { db in try await NotificationStore().find(db, id: notification.id, userID: nil) }
                #expect(row?.sentVia == .push)
            }
            #expect(worker.outcomeCounts["sent"] == 3 && worker.outcomeCounts["failed"] == 1 && worker.outcomeCounts["skipped"] == 2)
        }
    }
}
