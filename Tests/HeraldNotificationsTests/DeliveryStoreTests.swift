import Foundation
@_spi(Storage) import HeraldNotifications
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@Suite struct DeliveryStoreTests {
    static func push(_ id: String, status: DeliveryStatus, due: Int64, lease: Int64? = nil) -> DeliveryRecord {
        DeliveryRecord(
            id: id, notificationID: "ntf_\(id)", userID: "u1", channel: .push, deviceID: "dev", provider: .apns, status: status,
            nextAttemptAt: due, leaseUntil: lease, createdAt: 0, updatedAt: 0)
    }

    /// A claim takes rows whose lease ran out first, then due rows oldest first, never one not
    /// yet due, a live lease or a finished row, and never more than asked.
    @Test(arguments: TestEngine.allCases)
    func aClaimTakesExpiredLeasesThenTheOldestDueRows(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let rows = [
                Self.push("late", status: .pending, due: 900),
                Self.push("old", status: .pending, due: 100),
                Self.push("mid", status: .pending, due: 500),
                Self.push("future", status: .pending, due: 5_000),
                Self.push("orphan", status: .sending, due: 50, lease: 800),
                Self.push("leased", status: .sending, due: 50, lease: 9_000),
                Self.push("done", status: .sent, due: 10),
            ]
            try await database.withConnection { db in try await db.insertRows(DeliveryStore.bulkRows(rows)) }
            let store = DeliveryStore()
            let first = try await database.transaction { db in
                try await store.claimPush(db, engine: database.engine, now: 1_000, leaseUntil: 61_000, limit: 3)
            }
            #expect(Set(first.map(\.id)) == ["orphan", "old", "mid"])
            #expect(first.allSatisfy { $0.status == .sending && $0.leaseUntil == 61_000 && $0.attempts == 1 })
            let second = try await database.transaction { db in
                try await store.claimPush(db, engine: database.engine, now: 1_000, leaseUntil: 61_000, limit: 3)
            }
            #expect(second.map(\.id) == ["late"])
            let third = try await database.transaction { db in
                try await store.claimPush(db, engine: database.engine, now: 1_000, leaseUntil: 61_000, limit: 3)
            }
            #expect(third.isEmpty)
        }
    }

    /// Many outcomes in one statement: each row gets its own values (NULLs included), a retry
    /// stays open with its next attempt, and a row no longer `sending` (another worker's
    /// lease took it over and finished it) is left as it is.
    @Test(arguments: TestEngine.allCases)
    func outcomesAreWrittenTogetherOnlyToRowsStillSending(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let rows = [
                Self.push("a", status: .sending, due: 0, lease: 9_000),
                Self.push("b", status: .sending, due: 0, lease: 9_000),
                Self.push("c", status: .sending, due: 0, lease: 9_000),
                Self.push("d", status: .sent, due: 0),
            ]
            try await database.withConnection { db in try await db.insertRows(DeliveryStore.bulkRows(rows)) }
            let ends = [
                DeliveryStore.AttemptEnd(id: "a", status: .sent, providerMessageID: "apns-a", latencyMs: 12),
                DeliveryStore.AttemptEnd(id: "b", status: .pending, reason: "TooManyRequests", latencyMs: nil, retryAt: 7_000),
                DeliveryStore.AttemptEnd(id: "c", status: .dead, reason: "BadDeviceToken ' quoted", latencyMs: 3),
                DeliveryStore.AttemptEnd(id: "d", status: .dead, reason: "late"),
                DeliveryStore.AttemptEnd(id: "missing", status: .sent),
            ]
            try await database.transaction { db in try await DeliveryStore().finishAttempts(db, ends, now: 5_000) }
            let read = try await database.withConnection { db in
                try await db.raw("SELECT * FROM notification_deliveries ORDER BY id").all(decoding: DeliveryRecord.self)
            }
            let byID = Dictionary(uniqueKeysWithValues: read.map { ($0.id, $0) })
            #expect(read.count == 4)
            let a = try #require(byID["a"])
            #expect(a.status == .sent && a.providerMessageID == "apns-a" && a.latencyMs == 12 && a.reason == nil)
            #expect(a.leaseUntil == nil && a.completedAt == 5_000 && a.nextAttemptAt == 5_000 && a.updatedAt == 5_000)
            let b = try #require(byID["b"])
            #expect(b.status == .pending && b.reason == "TooManyRequests" && b.latencyMs == nil)
            #expect(b.nextAttemptAt == 7_000 && b.completedAt == nil && b.leaseUntil == nil)
            let c = try #require(byID["c"])
            #expect(c.status == .dead && c.reason == "BadDeviceToken ' quoted" && c.latencyMs == 3 && c.completedAt == 5_000)
            let d = try #require(byID["d"])
            #expect(d.status == .sent && d.reason == nil && d.updatedAt == 0)
        }
    }

    /// More outcomes than one statement carries are all written.
    @Test(arguments: TestEngine.allCases)
    func outcomesBeyondOneStatementAreAllWritten(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let rows = (0..<1_234).map { Self.push(String(format: "p%05d", $0), status: .sending, due: 0, lease: 9_000) }
            try await database.withConnection { db in try await db.insertRows(DeliveryStore.bulkRows(rows)) }
            let ends = rows.map { DeliveryStore.AttemptEnd(id: $0.id, status: .sent, providerMessageID: "m-\($0.id)", latencyMs: 1) }
            try await database.transaction { db in try await DeliveryStore().finishAttempts(db, ends, now: 5_000) }
            let sent = try await database.withConnection { db in
                try await db.raw("SELECT id, provider_message_id FROM notification_deliveries WHERE status = 'sent'").all().map {
                    (try $0.decode(column: "id", as: String.self), try $0.decode(column: "provider_message_id", as: String.self))
                }
            }
            #expect(sent.count == 1_234)
            #expect(sent.allSatisfy { $0.1 == "m-\($0.0)" })
        }
    }
}
