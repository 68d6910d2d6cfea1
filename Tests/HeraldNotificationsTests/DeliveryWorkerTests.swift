import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import HeraldTestSupport
import Testing

@Suite struct DeliveryWorkerTests {
    func delivery(_ h: NotificationHarness, _ notificationID: String) async throws -> DeliveryRecord {
        try #require(try await h.deliveries(notificationID).first)
    }

    @Test func answersAreClassified() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let sender = ScriptedSender([
                .tokenGone(reason: "Unregistered"), .failed(reason: "BadTopic"), .retry(reason: "TooManyRequests", after: .seconds(120)),
            ])
            let h = NotificationHarness(database: database, sender: sender)
            let gone = try await h.device("ann")
            let n1 = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            #expect(try await h.worker.runOnce() == 1)
            #expect(try await delivery(h, n1.id).status == "failed")
            let device = try await database.withConnection { db in try await DeviceStore().find(db, id: gone.id) }
            #expect(device?.isActive == false && device?.deactivationReason == "Unregistered")
            // A deactivated device is never sent to again.
            let n0 = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(n0.pushDeliveries == 0)

            try await h.device("bob")
            let n2 = try #require(try await h.service.send(h.draft(["bob"])).first).notification
            #expect(try await h.worker.runOnce() == 1)
            let dead = try await delivery(h, n2.id)
            #expect(dead.status == "dead" && dead.reason == "BadTopic")

            try await h.device("cat")
            let n3 = try #require(try await h.service.send(h.draft(["cat"])).first).notification
            let start = h.clock.now().epochMilliseconds
            #expect(try await h.worker.runOnce() == 1)
            let retry = try await delivery(h, n3.id)
            // Retry-After (120 s) is longer than the first backoff (~1 s): it wins.
            #expect(retry.status == "pending" && retry.attempts == 1 && retry.reason == "TooManyRequests")
            #expect(retry.nextAttemptAt >= start + 120_000)
            h.clock.advance(by: 119)
            #expect(try await h.worker.runOnce() == 0)
            h.clock.advance(by: 2)
            #expect(try await h.worker.runOnce() == 1)
            let done = try await delivery(h, n3.id)
            #expect(done.status == "sent" && done.attempts == 2)
        }
    }

    @Test func aProviderThatDoesNotAnswerCostsOneDeadlineAndIsRetried() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database, sender: ScriptedSender(delay: .seconds(30)))
            try await h.device("ann")
            let n = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            let started = ContinuousClock.now
            #expect(try await h.worker.runOnce() == 1)
            #expect(ContinuousClock.now - started < .seconds(5))
            let row = try await delivery(h, n.id)
            #expect(row.status == "pending" && row.reason == "timeout")
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
            var settings = DeliveryWorker.Settings()
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
