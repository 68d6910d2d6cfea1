import Foundation
import HeraldCore
import HeraldPush
import HeraldRealtime
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldAuth
@_spi(Storage) @testable import HeraldNotifications

@Suite struct NotificationServiceTests {
    @Test(arguments: TestEngine.allCases)
    func offlineUsersGetOnePushPerActiveDevice(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            let phone = try await h.device("ann")
            let tablet = try await h.device("ann", provider: .fcm, token: "fcm_" + String(repeating: "x", count: 40))
            let old = try await h.device("ann")
            _ = try await database.withConnection { db in try await DeviceStore().deactivate(db, id: old.id, reason: "Unregistered", now: 0) }
            try await h.device("bob")

            let outcome = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(outcome.channel == .push && outcome.pushDeliveries == 2 && !outcome.deduplicated)
            let planned = try await h.deliveries(outcome.notification.id)
            #expect(Set(planned.compactMap(\.deviceID)) == [phone.id, tablet.id])
            #expect(planned.allSatisfy { $0.status == .pending && $0.channel == .push })

            #expect(try await h.worker.runOnce() == 2)
            let sent = h.sender.sent
            #expect(Set(sent.map(\.deviceID)) == [phone.id, tablet.id])
            #expect(sent.allSatisfy { $0.badge == 1 && $0.title == "Your driver is close" && $0.attempt == 1 })
            #expect(sent.first?.data["trip_id"] == "tr_1")
            #expect(sent.first?.data["notification_id"] == .string(outcome.notification.id))
            let after = try await h.deliveries(outcome.notification.id)
            #expect(after.allSatisfy { $0.status == .sent && $0.attempts == 1 && $0.providerMessageID != nil })
            // Nothing is claimed twice.
            #expect(try await h.worker.runOnce() == 0)
            let record = try await database.withConnection { db in try await NotificationStore().find(db, id: outcome.notification.id, userID: "ann") }
            #expect(record?.sentVia == .push)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func onlineUsersGetTheSocketEventAndAnAckEndsIt(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            try await h.device("ann")
            let socket = RecordingSubscriber(1, user: "ann")
            h.hub.join(socket, room: "user:ann")

            let outcome = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(outcome.channel == .socket && outcome.pushDeliveries == 0)
            await h.hub.localDeliveriesSettled()
            let event = try #require(socket.events.first)
            #expect(event.name == "notification")
            let token = try #require(event.ackToken)
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data(event.payloadJSON.utf8))
            #expect(payload["id"] == .string(outcome.notification.id))
            #expect(payload["unread_count"] == 1)

            await h.hub.acknowledge(token)
            let rows = try await h.deliveries(outcome.notification.id)
            #expect(rows.map(\.status) == [.acknowledged])
            h.clock.advance(by: 5)
            #expect(try await h.service.fallBackOverdueAcks() == 0)
            #expect(try await h.worker.runOnce() == 0)
            #expect(h.sender.sent.isEmpty)
        }
    }

    /// Acks that arrive together are written together: every one counts once, the repeat of
    /// an ack changes nothing, and a delivery already fallen back to push stays so.
    @Test(arguments: TestEngine.allCases)
    func manyAcksAtOnceEachEndTheirDelivery(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            let users = (0..<40).map { "acker-\($0)" }
            var sockets: [RecordingSubscriber] = []
            for (index, user) in users.enumerated() {
                let socket = RecordingSubscriber(UInt64(index + 1), user: user)
                h.hub.join(socket, room: "user:\(user)")
                sockets.append(socket)
            }
            let outcomes = try await h.service.send(h.draft(users))
            #expect(outcomes.allSatisfy { $0.channel == .socket })
            await h.hub.localDeliveriesSettled()
            let tokens = try sockets.map { try #require($0.events.first?.ackToken) }
            #expect(tokens.allSatisfy { $0.kind == .delivery })
            // The last user's ack comes too late: that delivery falls back to push first.
            let now = h.clock.now().epochMilliseconds
            let fellBack = try await database.transaction { db in try await DeliveryStore().markUnacknowledged(db, id: tokens[39].id, now: now) }
            #expect(fellBack)
            await withTaskGroup(of: Void.self) { group in
                for token in tokens + tokens.prefix(5) { group.addTask { await h.hub.acknowledge(token) } }
            }
            for (index, outcome) in outcomes.enumerated() {
                let rows = try await h.deliveries(outcome.notification.id)
                #expect(rows.map(\.status) == [index == 39 ? .unacknowledged : .acknowledged])
            }
            let sentVia = try await database.withConnection { db in
                try await NotificationStore().find(db, ids: outcomes.map(\.notification.id))
            }
            #expect(outcomes.prefix(39).allSatisfy { sentVia[$0.notification.id]?.sentVia == .socket })
            #expect(sentVia[outcomes[39].notification.id]?.sentVia == nil)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func anUnacknowledgedSocketDeliveryFallsBackToPushOnce(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database)
            try await h.device("ann")
            try await h.device("ann")
            let socket = RecordingSubscriber(1, user: "ann")
            h.hub.join(socket, room: "user:ann")
            let outcome = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(outcome.channel == .socket)
            await h.hub.localDeliveriesSettled()  // the socket event carries the ack token used below
            // Not yet due.
            h.clock.advance(by: 0.5)
            #expect(try await h.service.fallBackOverdueAcks() == 0)
            h.clock.advance(by: 0.6)
            #expect(try await h.service.fallBackOverdueAcks() == 2)
            #expect(try await h.service.fallBackOverdueAcks() == 0)
            // A late ack changes nothing.
            await h.hub.acknowledge(try #require(socket.events.first?.ackToken))
            let rows = try await h.deliveries(outcome.notification.id)
            #expect(rows.filter { $0.channel == .socket }.map(\.status) == [.unacknowledged])
            #expect(rows.filter { $0.channel == .push }.count == 2)
            #expect(try await h.worker.runOnce() == 2)
            #expect(h.sender.sent.count == 2)
        }
    }

    @Test func inAppNotificationsNeverPushAndWaitInTheInbox() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database)
            try await h.device("ann")
            var draft = h.draft(["ann"])
            draft.delivery = .inApp
            let offline = try #require(try await h.service.send(draft).first)
            #expect(offline.channel == .inbox && offline.pushDeliveries == 0 && offline.pushSuppressed == .inAppOnly)
            let socket = RecordingSubscriber(1, user: "ann")
            h.hub.join(socket, room: "user:ann")
            h.clock.advance(by: 1)
            let online = try #require(try await h.service.send(draft).first)
            #expect(online.channel == .socket)
            await h.hub.localDeliveriesSettled()
            #expect(socket.events.count == 1 && socket.events.first?.ackToken == nil)
            #expect(try await h.deliveries(online.notification.id).map(\.status) == [.published])
            let unread = try await h.inbox.unread(userID: "ann", since: nil)
            #expect(unread.map(\.id) == [online.notification.id, offline.notification.id])
        }
    }

    @Test func quietHoursInTheUsersTimeZoneHoldBackPush() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database)
            try await h.device("ann")
            let now = h.clock.now().epochMilliseconds
            try await database.withConnection { db in
                try await UserStore().ensure(db, id: "ann", role: "customer", now: now)
                _ = try await UserStore().update(db, id: "ann", changes: UserChanges(timeZone: "Australia/Sydney"), now: now)
                try await NotificationPreferenceStore().saveSettings(
                    db,
                    NotificationSettingsRecord(
                        userID: "ann", quietHoursEnabled: true, quietStart: "22:00", quietEnd: "07:00", severityFloor: "info",
                        timeSensitiveAllowed: true, updatedAt: now))
            }
            // 02:00Z is 12:00 in Sydney: pushes go out.
            #expect(try await h.service.send(h.draft(["ann"])).first?.channel == .push)
            // 13:30Z is 23:30 in Sydney: held back, kept in the inbox.
            h.clock.set(Timestamp.parse("2026-07-15T13:30:00Z")!)
            let quiet = try #require(try await h.service.send(h.draft(["ann"])).first)
            #expect(quiet.channel == .inbox && quiet.pushSuppressed == .quietHours && quiet.pushDeliveries == 0)
            // The highest severity passes.
            var alert = h.draft(["ann"])
            alert.severity = .alert
            #expect(try await h.service.send(alert).first?.channel == .push)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func dedupeReturnsTheFirstWithinTheCooldownAndConcurrentSendersAgree(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database) { $0.dedupeCooldownSeconds = 60 }
            let first = try #require(try await h.service.send(h.draft(["ann"], dedupe: "alert_1")).first)
            let again = try #require(try await h.service.send(h.draft(["ann"], dedupe: "alert_1")).first)
            #expect(again.deduplicated && again.notification.id == first.notification.id)
            // Another user, or another key, is not a duplicate.
            #expect(try await h.service.send(h.draft(["bob"], dedupe: "alert_1")).first?.deduplicated == false)
            #expect(try await h.service.send(h.draft(["ann"], dedupe: "alert_2")).first?.deduplicated == false)
            // After the cooldown the group may notify again.
            h.clock.advance(by: 61)
            let later = try #require(try await h.service.send(h.draft(["ann"], dedupe: "alert_1")).first)
            #expect(!later.deduplicated && later.notification.id != first.notification.id)

            let results = try await withThrowingTaskGroup(of: SendOutcome?.self) { group in
                for _ in 0..<12 { group.addTask { try await h.service.send(h.draft(["cat"], dedupe: "race")).first } }
                var all: [SendOutcome] = []
                for try await outcome in group { if let outcome { all.append(outcome) } }
                return all
            }
            #expect(results.filter { !$0.deduplicated }.count == 1)
            #expect(Set(results.map(\.notification.id)).count == 1)
            #expect(try await h.inbox.list(userID: "cat", offset: 0, limit: 50, unreadOnly: false).total == 1)
        }
    }

    @Test func draftsAreValidatedFieldByField() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database)
            var draft = h.draft([])
            draft.type = "no_such_type"
            draft.title = String(repeating: "x", count: 256)
            draft.collapseKey = String(repeating: "c", count: 65)
            draft.ttlSeconds = -1
            draft.data = ["aps": ["alert": "x"], "notification_type": "x", "gcm.n.e": "1", "kept": "yes"]
            do {
                _ = try await h.service.send(draft)
                Issue.record("an invalid draft was accepted")
            } catch let error as APIError {
                guard case .array(let list)? = error.details?["fields"] else {
                    Issue.record("no field list in \(error)")
                    return
                }
                let fields = Set(list.compactMap { $0["field"]?.stringValue })
                #expect(fields == ["user_ids", "type", "title", "collapse_key", "ttl_seconds", "data.aps", "data.notification_type", "data.gcm.n.e"])
            }
            #expect(try await h.inbox.list(userID: "ann", offset: 0, limit: 10, unreadOnly: false).total == 0)
        }
    }

    /// A device back from a while away learns what the other devices read and deleted since
    /// its last sync, not only what is new; a sync cut at `sync_limit` says more exist.
    @Test(arguments: TestEngine.allCases)
    func aResyncReportsReadsAndDeletesFromOtherDevicesAndABoundedSyncSaysMoreExist(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = NotificationHarness(database: database) { $0.syncLimit = 2 }
            var sent: [String] = []
            for _ in 0..<3 {
                sent.append(try #require(try await h.service.send(h.draft(["ann"])).first).notification.id)
                h.clock.advance(by: 1)
            }
            let first = try await h.inbox.syncPayload(userID: "ann", since: nil)
            #expect(first["notifications"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [sent[2], sent[1]])
            #expect(first["has_more"] == true && first["unread_count"] == 3 && first["read_ids"] == nil)
            let syncedAt = try #require(first["synced_at"]?.stringValue.flatMap(Timestamp.parse)).epochMilliseconds
            h.clock.advance(by: 5)
            // Meanwhile, on the phone: one read, one deleted; and a new one arrives.
            _ = try await h.inbox.markRead(userID: "ann", id: sent[0])
            #expect(try await h.inbox.delete(userID: "ann", id: sent[1]))
            let fresh = try #require(try await h.service.send(h.draft(["ann"])).first).notification.id
            let resync = try await h.inbox.syncPayload(userID: "ann", since: syncedAt)
            #expect(resync["notifications"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [fresh])
            #expect(resync["read_ids"] == [.string(sent[0])] && resync["deleted_ids"] == [.string(sent[1])])
            #expect(resync["has_more"] == false && resync["changes_truncated"] == false && resync["unread_count"] == 2)
        }
    }

    @Test func readStateIsPerUserAndAnnouncedToTheUsersRoom() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let h = NotificationHarness(database: database)
            let a = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            let b = try #require(try await h.service.send(h.draft(["ann"])).first).notification
            let other = try #require(try await h.service.send(h.draft(["bob"])).first).notification
            let device2 = RecordingSubscriber(2, user: "ann")
            h.hub.join(device2, room: "user:ann")

            #expect(try await h.inbox.markRead(userID: "ann", id: other.id) == nil)
            #expect(try await h.inbox.markRead(userID: "ann", id: a.id)?.readAt != nil)
            await h.hub.localDeliveriesSettled()
            #expect(device2.events.map(\.name) == ["notification_read"])
            // Reading it again announces nothing.
            _ = try await h.inbox.markRead(userID: "ann", id: a.id)
            await h.hub.localDeliveriesSettled()
            #expect(device2.events.count == 1)
            let changed = try await h.inbox.markRead(userID: "ann", ids: [a.id, b.id, other.id])
            #expect(changed == [b.id])
            await h.hub.localDeliveriesSettled()
            #expect(device2.events.map(\.name) == ["notification_read", "notifications_bulk_read"])
            // The other device learns which ones were read (only those that changed), when, and
            // the count left, in the notification design's shape.
            let single = try JSONDecoder().decode(JSONValue.self, from: Data(device2.events[0].payloadJSON.utf8))
            #expect(single["notification_id"] == .string(a.id) && single["unread_count"] == 1 && single["read_at"]?.stringValue != nil)
            let bulk = try JSONDecoder().decode(JSONValue.self, from: Data(device2.events[1].payloadJSON.utf8))
            #expect(bulk["notification_ids"] == [.string(b.id)] && bulk["unread_count"] == 0)
            #expect(bulk["read_at"]?.stringValue.flatMap(Timestamp.parse) != nil)
            #expect(try await h.inbox.unreadCount(userID: "ann") == 0)
            #expect(try await h.inbox.unreadCount(userID: "bob") == 1)
            #expect(try await h.inbox.delete(userID: "ann", id: other.id) == false)
            #expect(try await h.inbox.delete(userID: "ann", id: a.id) == true)
            #expect(try await h.inbox.list(userID: "ann", offset: 0, limit: 10, unreadOnly: false).notifications.map(\.id) == [b.id])
        }
    }

    /// With PostgreSQL, a user connected to another node (fresh heartbeat) counts as online;
    /// one whose node stopped heartbeating does not. One send, many users, one lookup.
    @Test func usersOnOtherNodesAreOnlineWhileTheirNodeHeartbeats() async throws {
        try await TestDatabase.with(.postgres) { database in
            let h = NotificationHarness(database: database)
            let now = h.clock.now().epochMilliseconds
            try await database.withConnection { db in
                try await db.raw("INSERT INTO realtime_nodes (node_id, heartbeat_at) VALUES ('node_live', \(bind: now)), ('node_dead', \(bind: now - 60_000))")
                    .run()
                try await db.raw("INSERT INTO realtime_presence (node_id, user_id, connections) VALUES ('node_live', 'ann', 1), ('node_dead', 'bob', 1)").run()
            }
            for user in ["ann", "bob", "cat"] { try await h.device(user) }
            let outcomes = try await h.service.send(NotificationDraft(userIDs: ["cat", "bob", "ann"], type: "trip_update", title: "Hi"))
            #expect(outcomes.map(\.notification.userID) == ["cat", "bob", "ann"])
            #expect(outcomes.map(\.channel) == [.push, .push, .socket])
            #expect(outcomes.map(\.pushDeliveries) == [1, 1, 0])
        }
    }
}
