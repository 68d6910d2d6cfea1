import Foundation
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldStorage
import Synchronization
import Testing

@testable import HeraldRealtime

/// Runs `body` with a probe connected to `/api/v1/realtime` of a live test server.
func withNativeClient(
    _ session: TestSession, token: String, query: String = "", _ body: @Sendable @escaping (WebSocketProbe) async throws -> Void
) async throws {
    let port = try #require(session.client.port)
    let probe = WebSocketProbe()
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await probe.run(url: "ws://127.0.0.1:\(port)/api/v1/realtime?token=\(token)\(query)") }
        defer { probe.close() }
        try await body(probe)
        probe.close()
        try await group.waitForAll()
    }
}

@Suite struct NativeRealtimeTests {
    @Test(arguments: TestEngine.allCases)
    func subscribersReceiveEventsWithIDsAndOnlyTheirOwn(engine: TestEngine) async throws {
        try await TestServer.run(engine, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                let hello = await ann.next(type: "connected")
                #expect(hello?["user_id"] == "ann")
                #expect(hello?["channels"] == ["user:ann"])
                try await hub.publish("job:new", payload: ["job_id": "j1"], to: "user:ann")
                try await hub.publish("job:new", payload: ["job_id": "other"], to: "user:bob")
                let event = await ann.next(type: "job:new")
                #expect(event == ["type": "job:new", "event_id": "evt_1", "channel": "user:ann", "payload": ["job_id": "j1"]])
                ann.send(["type": "ping"])
                #expect(await ann.next(type: "pong") != nil)
                #expect(await ann.next(type: "job:new", timeout: .milliseconds(200)) == nil)
            }
        }
    }

    /// One event to more connections than a write round takes (64): every connection gets
    /// every event, in order, the rounds joined by the loop's wake pipe.
    @Test func aBroadcastLargerThanAWriteRoundReachesEveryConnectionInOrder() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            let port = try #require(session.client.port)
            let token = try await session.token("ann")
            let probes = (0..<150).map { _ in WebSocketProbe() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for probe in probes {
                    group.addTask { try await probe.run(url: "ws://127.0.0.1:\(port)/api/v1/realtime?token=\(token)") }
                }
                defer { for probe in probes { probe.close() } }
                // One deadline for all: a broken round fails once, not once per probe.
                let deadline = ContinuousClock.now + Patience.limit
                for probe in probes { #expect(await probe.next(type: "connected", timeout: deadline - .now) != nil) }
                for n in 1...3 { try await hub.publish("job:new", payload: ["n": .string("\(n)")], to: "user:ann") }
                for probe in probes {
                    var got: [String?] = []
                    for _ in 1...3 {
                        got.append(await probe.next(type: "job:new", timeout: deadline - .now)?["payload"]?["n"]?.stringValue)
                    }
                    #expect(got == ["1", "2", "3"])
                }
                for probe in probes { probe.close() }
                try await group.waitForAll()
            }
        }
    }

    @Test func channelsOfOthersAreRefused() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                _ = await ann.next(type: "connected")
                ann.send(["type": "subscribe", "channel": "user:bob"])
                let refused = await ann.next(type: "error")
                #expect(refused?["code"] == "FORBIDDEN")
                #expect(refused?["channel"] == "user:bob")
                ann.send(["type": "subscribe", "channel": "trip:t1"])
                #expect(await ann.next(type: "error")?["code"] == "FORBIDDEN")
                ann.send(["type": "subscribe", "channel": "has space"])
                #expect(await ann.next(type: "error")?["code"] == "INVALID_CHANNEL")
            }
            // Domain modules open their channels with a rule; operators see everything.
            session.runtime.realtime.channels.allow(prefix: "trip") { identity, channel in
                channel == "trip:t1" && identity.userID == "ann"
            }
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                ann.send(["type": "subscribe", "channel": "trip:t1"])
                #expect(await ann.next(type: "subscribed")?["channel"] == "trip:t1")
            }
            try await withNativeClient(session, token: try await session.token("ops", .operator)) { ops in
                ops.send(["type": "subscribe", "channel": "user:bob"])
                #expect(await ops.next(type: "subscribed")?["channel"] == "user:bob")
            }
        }
    }

    /// The notification design's `subscribe {user_id}`: the own room is confirmed (it was joined at connect, and
    /// events keep arriving once), another user's is refused like its channel name.
    @Test func subscribeByUserIDNamesTheUsersRoom() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                _ = await ann.next(type: "connected")
                ann.send(["type": "subscribe", "user_id": "ann"])
                let subscribed = await ann.next(type: "subscribed")
                #expect(subscribed?["status"] == "subscribed" && subscribed?["channel"] == "user:ann")
                try await session.runtime.realtime.hub.publish("notification", payload: ["id": "n1"], to: "user:ann")
                #expect(await ann.next(type: "notification")?["payload"]?["id"] == "n1")
                #expect(await ann.next(type: "notification", timeout: .milliseconds(300)) == nil)
                ann.send(["type": "subscribe", "user_id": "bob"])
                let refused = await ann.next(type: "error")
                #expect(refused?["code"] == "FORBIDDEN" && refused?["channel"] == "user:bob")
                ann.send(["type": "subscribe", "user_id": 7])
                #expect(await ann.next(type: "error")?["code"] == "INVALID_CHANNEL")
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func subscribingWithALastEventIDReplaysWhatWasMissed(engine: TestEngine) async throws {
        try await TestServer.run(engine, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            for index in 1...5 {
                try await hub.publish("tick", payload: .number(Double(index)), to: "user:ann")
            }
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                ann.send(["type": "subscribe", "channel": "user:ann", "last_event_id": "evt_3"])
                let subscribed = await ann.next(type: "subscribed")
                #expect(subscribed?["recovered"] == true)
                #expect(subscribed?["replay_from"] == "evt_4")
                #expect(subscribed?["latest_event_id"] == "evt_5")
                #expect(await ann.next(type: "tick")?["event_id"] == "evt_4")
                #expect(await ann.next(type: "tick")?["event_id"] == "evt_5")
                try await hub.publish("tick", payload: 6, to: "user:ann")
                #expect(await ann.next(type: "tick")?["event_id"] == "evt_6")
            }
        }
    }

    @Test func aGapOlderThanTheHistoryIsReportedNotPartlyReplayed() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            // More than the node keeps in memory (256 per room) and, after the trim, more than
            // the database keeps: neither can replay from evt_1, and nothing partial is sent.
            for index in 1...300 {
                try await hub.publish("tick", payload: .number(Double(index)), to: "user:ann")
            }
            _ = try await hub.database.withConnection { db in try await RealtimeEventStore().trim(db, before: 0, keepPerRoom: 2) }
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                ann.send(["type": "subscribe", "channel": "user:ann", "last_event_id": "evt_1"])
                let subscribed = await ann.next(type: "subscribed")
                #expect(subscribed?["recovered"] == false)
                #expect(subscribed?["latest_event_id"] == "evt_300")
                #expect(await ann.next(type: "tick", timeout: .milliseconds(200)) == nil)
            }
        }
    }

    /// A client that connected with `?acks=false` is asked for no ack, and a delivery counts
    /// as acknowledged once handed to it (the notification design's apps never acknowledge).
    @Test func aClientThatSaysItNeverAcknowledgesHasDeliveriesAcknowledgedOnEmit() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            let acknowledged = AcknowledgedTokens()
            let kind = AckToken.Kind(rawValue: "test")
            hub.onAcknowledge(kind) { id in acknowledged.add(id) }
            try await withNativeClient(session, token: try await session.token("ann"), query: "&acks=false") { ann in
                _ = await ann.next(type: "connected")
                try await hub.publish("notification", payload: ["id": "n1"], to: "user:ann", persist: false, ackToken: AckToken(kind, id: "dlv_test_1"))
                let event = await ann.next(type: "notification")
                #expect(event?["payload"]?["id"] == "n1")
                #expect(event?["ack_id"] == nil, "no ack asked of a client that never gives one")
                try await waitUntil("the delivery acknowledged on the client's behalf") { acknowledged.tokens == ["dlv_test_1"] }
            }
            // A client that acknowledges is asked to, and nothing is acknowledged for it.
            try await withNativeClient(session, token: try await session.token("bob")) { bob in
                _ = await bob.next(type: "connected")
                try await hub.publish("notification", payload: ["id": "n2"], to: "user:bob", persist: false, ackToken: AckToken(kind, id: "dlv_test_2"))
                #expect(await bob.next(type: "notification")?["ack_id"] == "dlv_test_2")
                #expect(acknowledged.tokens == ["dlv_test_1"])
            }
        }
    }

    @Test func reconnectAnswersWithStateSync() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let realtime = session.runtime.realtime
            realtime.channels.allow(prefix: "trip") { identity, _ in identity.userID == "rider" }
            realtime.native.stateSync(prefix: "trip") { _, channel, clientState in
                [
                    "current_state": "IN_PROGRESS", "latest_driver_location": ["latitude": -33.86], "client_state_was": clientState ?? .null,
                    "echo": .string(channel),
                ]
            }
            for index in 1...3 {
                try await realtime.hub.publish("driver_location", payload: ["n": .number(Double(index))], to: "trip:tr_1")
            }
            try await withNativeClient(session, token: try await session.token("rider")) { rider in
                rider.send(["type": "reconnect", "last_event_id": "evt_1", "trip_id": "tr_1", "client_state": "ACCEPTED"])
                let sync = await rider.next(type: "state_sync")
                #expect(sync?["channel"] == "trip:tr_1")
                #expect(sync?["current_state"] == "IN_PROGRESS")
                #expect(sync?["latest_driver_location"] == ["latitude": -33.86])
                #expect(sync?["client_state_was"] == "ACCEPTED")
                #expect(sync?["recovered"] == true)
                guard case .array(let missed)? = sync?["missed_events"] else {
                    Issue.record("missed_events missing")
                    return
                }
                #expect(missed.map { $0["event_id"] } == ["evt_2", "evt_3"])
                #expect(missed.first?["payload"] == ["n": 2])
                // The channel is live afterwards.
                try await realtime.hub.publish("eta_update", payload: [:], to: "trip:tr_1")
                #expect(await rider.next(type: "eta_update")?["event_id"] == "evt_4")
            }
        }
    }

    @Test func messagesAreRateLimitedAndMalformedOnesAnswered() async throws {
        // A frozen clock: the budget of 3 messages refills only when the test says so.
        let clock = ManualClock(Date())
        try await TestServer.run(.sqlite, setup: .live, clock: clock, configure: { $0.realtime.clientMessagesPerSecond = 3 }) { session in
            try await withNativeClient(session, token: try await session.token("ann", ttl: 86_400)) { ann in
                _ = await ann.next(type: "connected")
                ann.sendRaw("not json")
                #expect(await ann.next(type: "error")?["code"] == "INVALID_MESSAGE")
                for _ in 0..<5 { ann.send(["type": "ping"]) }
                var pongs = 0
                var limited: [JSONValue] = []
                while pongs + limited.count < 5, let message = await ann.next() {
                    if message["type"] == "pong" { pongs += 1 }
                    if message["code"] == "RATE_LIMITED" { limited.append(message) }
                }
                #expect(pongs == 2)
                #expect(limited.count == 3)
                #expect(limited.allSatisfy { ($0["retry_after_ms"]?.doubleValue ?? 0) > 0 })
                clock.advance(by: 1)
                ann.send(["type": "dance"])
                #expect(await ann.next(type: "error")?["code"] == "UNKNOWN_TYPE")
            }
        }
    }

    /// The token's end closes a native connection with `TOKEN_EXPIRED` (what `HeraldClient`
    /// refreshes on), however long ago it connected.
    @Test func aConnectionWhoseTokenExpiresIsToldTokenExpiredAndClosed() async throws {
        let clock = ManualClock()
        try await TestServer.run(.sqlite, setup: .live, clock: clock) { session in
            try await withNativeClient(session, token: try await session.token("ann", ttl: 60)) { ann in
                #expect(await ann.next(type: "connected") != nil)
                clock.advance(by: 120)
                let error = await ann.next(type: "error")
                #expect(error?["code"] == "TOKEN_EXPIRED", "\(String(describing: error))")
                #expect(await ann.next(timeout: .seconds(30)) == nil, "the connection is closed after it")
            }
        }
    }

    /// The notification design's `resync {last_sync_at}` on the native protocol: the unread notifications
    /// since then, and the ids read or deleted meanwhile (Socket.IO: Tests/e2e).
    @Test func resyncAnswersWithWhatChangedSince() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let backend = try await session.token("backend", .service)
            @Sendable func send(_ title: String) async throws -> String {
                let reply = try await session.request(
                    .post, "/api/v1/notifications", token: backend, json: ["user_id": "ann", "type": "service_alert", "title": .string(title)])
                return try #require(reply.data?["results"]?[0]?["notification"]?["id"]?.stringValue ?? reply.data?["notification"]?["id"]?.stringValue)
            }
            let old = try await send("Old")
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                let first = await ann.next(type: "sync")
                let syncedAt = try #require(first?["synced_at"]?.stringValue)
                #expect(first?["notifications"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [old])
                // Later: one new notification, the old one read elsewhere.
                try await CancellableSleep.sleep(for: .milliseconds(1100))
                let fresh = try await send("Fresh")
                let read = try await session.request(.post, "/api/v1/notifications/\(old)/read", token: try await session.token("ann"))
                #expect(read.status == 200)
                ann.send(["type": "resync", "last_sync_at": .string(syncedAt), "request_id": "r1"])
                let resync = await ann.next(type: "sync")
                #expect(resync?["notifications"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.contains(fresh) == true)
                #expect(resync?["read_ids"] == [.string(old)] && resync?["unread_count"] == 1)
                ann.send(["type": "resync", "last_sync_at": "yesterday"])
                #expect(await ann.next(type: "resync")?["code"] == "INVALID_ARGUMENT")
            }
        }
    }

    @Test func withoutAValidTokenTheUpgradeIsRefused() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let plain = try await session.request(.get, "/api/v1/realtime?token=garbage")
            #expect(plain.status == 401)
            #expect(plain.errorCode == "UNAUTHORIZED")
            let noUpgrade = try await session.request(.get, "/api/v1/realtime?token=\(try await session.token("ann"))")
            #expect(noUpgrade.status == 426)
            let probe = WebSocketProbe()
            let port = try #require(session.client.port)
            await #expect(throws: (any Error).self) { try await probe.run(url: "ws://127.0.0.1:\(port)/api/v1/realtime?token=garbage") }
        }
    }
}

/// The tokens a hub's acknowledgement observer saw.
final class AcknowledgedTokens: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ token: String) { list.withLock { $0.append(token) } }
    var tokens: [String] { list.withLock { $0 } }
}
