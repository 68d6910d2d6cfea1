import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

/// Issue 37: concurrent sends share a transaction, and pushes written on a node are sent from
/// its memory — with every guarantee of the one-by-one path kept.
@Suite struct DurablePathTests {
    struct RecorderFailure: Error {}

    /// What the tasks of a test collect.
    final class Collected: Sendable {
        let values = Mutex<[String: [String]]>([:])
        func add(_ key: String, _ items: [String]) { values.withLock { $0[key, default: []] += items } }
        var snapshot: [String: [String]] { values.withLock { $0 } }
    }

    /// Each send's answer reaches its own request's recorder (the idempotency layer stores it
    /// with the rows), however many sends share the transaction.
    @Test(arguments: TestEngine.allCases)
    func concurrentSendsEachRecordTheirOwnAnswer(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            let users = (0..<40).map { "user\($0)" }
            let recorded = Collected()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in users {
                    group.addTask {
                        let answer = TransactionAnswer { result, _ in
                            let outcomes = try #require(result as? [SendOutcome])
                            recorded.add(user, outcomes.map(\.notification.userID))
                        }
                        let outcomes = try await h.service.send(h.draft([user]), answer: answer)
                        #expect(outcomes.map(\.notification.userID) == [user])
                    }
                }
                try await group.waitForAll()
            }
            let answers = recorded.snapshot
            // Every request recorded exactly its own recipient (once: a group that committed
            // is never written again).
            #expect(answers.count == users.count)
            for user in users { #expect(answers[user] == [user], "\(user): \(answers[user] ?? [])") }
            for user in users {
                let page = try await h.inbox.list(userID: user, offset: 0, limit: 10, unreadOnly: false)
                #expect(page.notifications.count == 1, "\(user)")
            }
        }
    }

    /// A send whose part of the shared transaction fails (here its answer cannot be recorded,
    /// as when another node took its idempotency key over) fails alone: the others commit.
    @Test(arguments: TestEngine.allCases)
    func aSendThatFailsInASharedTransactionFailsAlone(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            let users = (0..<30).map { "user\($0)" }
            let failed = Collected()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in users.enumerated() {
                    group.addTask {
                        let answer = TransactionAnswer { _, _ in if index % 10 == 7 { throw RecorderFailure() } }
                        do {
                            _ = try await h.service.send(h.draft([user]), answer: answer)
                        } catch is RecorderFailure {
                            failed.add("failed", [user])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(Set(failed.snapshot["failed"] ?? []) == ["user7", "user17", "user27"])
            for user in users {
                let page = try await h.inbox.list(userID: user, offset: 0, limit: 10, unreadOnly: false)
                #expect(page.notifications.count == (["user7", "user17", "user27"].contains(user) ? 0 : 1), "\(user)")
            }
        }
    }

    /// Two sends with one dedupe key to one user in the same group: the second finds the
    /// first, as if they had run one after the other.
    @Test(arguments: TestEngine.allCases)
    func aDedupeKeyHoldsWithinASharedTransaction(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            let outcomes = try await withThrowingTaskGroup(of: [SendOutcome].self) { group in
                for _ in 0..<8 { group.addTask { try await h.service.send(h.draft(["ann"], dedupe: "trip-1")) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(outcomes.count { !$0.deduplicated } == 1)
            #expect(Set(outcomes.map(\.notification.id)).count == 1)
            let page = try await h.inbox.list(userID: "ann", offset: 0, limit: 10, unreadOnly: false)
            #expect(page.notifications.count == 1)
        }
    }

    /// A push written on this node is sent from memory: written claimed (attempt 1, leased),
    /// sent by the next round without a claim, recorded once.
    @Test(arguments: TestEngine.allCases)
    func aHandedOverPushIsSentFromMemoryOnce(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database, handoffCapacity: 100)
            let device = try await h.device("ann")
            _ = try await h.service.send(h.draft(["ann"]))  // an unread one first: the badge counts both
            _ = try await h.worker.runOnce()
            let sent = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(sent.channel == .push && sent.pushDeliveries == 1)
            let written = try #require(try await h.deliveries(sent.notification.id).first)
            #expect(written.status == .sending && written.attempts == 1)
            #expect(written.leaseUntil == h.clock.now().epochMilliseconds + 60_000 && written.nextAttemptAt == written.leaseUntil)
            #expect(h.worker.handoff?.depth == 1)

            #expect(try await h.worker.runOnce() == 1)
            let message = try #require(h.sender.sent.last)
            #expect(message.deliveryID == written.id && message.deviceID == device.id && message.token == device.token)
            #expect(message.notificationID == sent.notification.id && message.title == "Your driver is close" && message.badge == 2)
            #expect(message.data["notification_id"] == .string(sent.notification.id) && message.data["trip_id"] == "tr_1")
            let done = try #require(try await h.deliveries(sent.notification.id).first)
            #expect(done.status == .sent && done.attempts == 1 && done.providerMessageID == "pm-\(written.id)")
            #expect(try await h.worker.runOnce() == 0)
            #expect(h.sender.sent.count == 2)
        }
    }

    /// The node that wrote claimed pushes dies before sending them: nothing is lost and
    /// nothing is sent twice. Another worker takes them through the database once their
    /// lease ends, not before.
    @Test(arguments: TestEngine.allCases)
    func handedOverPushesOfANodeThatDiedAreSentOnceAfterTheirLease(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database, handoffCapacity: 100)
            for user in ["ann", "bob", "cat"] { try await h.device(user) }
            let sent = try await h.service.send(h.draft(["ann", "bob", "cat"]))
            #expect(sent.map(\.pushDeliveries) == [1, 1, 1])
            // `h.worker` never runs: its memory is lost with its node. Another node's worker:
            let survivor = ScriptedSender()
            var settings = DeliveryWorker.Settings.patient
            settings.handoffCapacity = 0
            let other = DeliveryWorker(database: database, senders: [:], fallback: survivor, clock: h.clock, settings: settings, logger: TestDatabase.logger)
            #expect(try await other.runOnce() == 0)
            h.clock.advance(by: 59)
            #expect(try await other.runOnce() == 0)
            h.clock.advance(by: 2)
            #expect(try await other.runOnce() == 3)
            #expect(Set(survivor.sent.map(\.notificationID)) == Set(sent.map(\.notification.id)))
            for outcome in sent {
                let row = try #require(try await h.deliveries(outcome.notification.id).first)
                #expect(row.status == .sent && row.attempts == 2)
            }
            #expect(try await other.runOnce() == 0)
            #expect(survivor.sent.count == 3 && h.sender.sent.isEmpty)
        }
    }

    /// A worker that stops (a graceful shutdown) gives its unsent hand-overs back to the
    /// outbox due now, so the next worker sends them at once, as first attempts.
    @Test(arguments: TestEngine.allCases)
    func aStoppingWorkerReleasesItsUnsentHandOvers(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database, handoffCapacity: 100)
            for user in ["ann", "bob"] { try await h.device(user) }
            let sent = try await h.service.send(h.draft(["ann", "bob"]))
            await h.worker.releaseHandedOver()
            #expect(h.worker.handoff?.depth == 0)
            for outcome in sent {
                let row = try #require(try await h.deliveries(outcome.notification.id).first)
                #expect(row.status == .pending && row.attempts == 0 && row.leaseUntil == nil)
            }
            let next = ScriptedSender()
            let other = DeliveryWorker(
                database: database, senders: [:], fallback: next, clock: h.clock, settings: .patient, logger: TestDatabase.logger)
            #expect(try await other.runOnce() == 2)
            #expect(next.sent.map(\.attempt).sorted() == [1, 1] && h.sender.sent.isEmpty)
        }
    }

    /// A full hand-over queue sends pushes through the database instead, nothing lost.
    @Test func aFullHandoffWritesPendingPushesForTheDatabasePath() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database, handoffCapacity: 2)
            for user in ["ann", "bob", "cat"] { try await h.device(user) }
            let sent = try await h.service.send(h.draft(["ann", "bob", "cat"]))
            for outcome in sent {
                let row = try #require(try await h.deliveries(outcome.notification.id).first)
                #expect(row.status == .pending && row.attempts == 0)
            }
            #expect(h.worker.handoff?.depth == 0)
            let second = try await h.service.send(h.draft(["ann", "bob"]))
            #expect(h.worker.handoff?.depth == 2)
            // One round: the two handed over, and the three pending claimed for the rest of the batch.
            #expect(try await h.worker.runOnce() == 5)
            #expect(Set(h.sender.sent.map(\.notificationID)) == Set((sent + second).map(\.notification.id)))
            #expect(try await h.worker.runOnce() == 0)
        }
    }
}
