import Foundation
import HeraldClient
import HeraldCore
import HeraldServerTestSupport
import HummingbirdTesting
import Synchronization
import Testing

/// The client against the real server on a loopback socket: REST through URLSession, the
/// realtime protocol through the platform's WebSocket (SwiftNIO's on Linux).
@Suite struct HeraldClientTests {
    /// Runs `body` against a live server; a test that waits for something that never comes
    /// fails after `timeout` instead of hanging the suite. (Long: a loaded machine is slow, not
    /// stuck. The ack deadline too: an ack that comes late must not turn into a push.)
    static func withServer(timeout: Duration = Patience.limit, _ body: @escaping @Sendable (URL, TestSession) async throws -> Void) async throws {
        try await TestServer.run(.sqlite, setup: .live, configure: { $0.notifications.ackTimeoutMs = 600_000 }) { session in
            let port = try #require(session.client.port)
            try await within(timeout) { try await body(URL(string: "http://127.0.0.1:\(port)")!, session) }
        }
    }

    struct TimedOut: Error {}

    static func within(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await CancellableSleep.sleep(for: timeout)
                throw TimedOut()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Counts the calls and hands out `tokens` in turn (the last repeats).
    final class Tokens: HeraldTokenProvider {
        let calls = Mutex<[Bool]>([])
        let tokens: [String]
        init(_ tokens: [String]) { self.tokens = tokens }
        func token(forceRefresh: Bool) async throws -> String {
            let index = calls.withLock { calls in
                calls.append(forceRefresh)
                return calls.count - 1
            }
            return tokens[min(index, tokens.count - 1)]
        }
    }

    @Test func callsDecodeTheEnvelopeRefreshAnExpiredTokenAndNameErrors() async throws {
        try await Self.withServer { url, session in
            let good = try await session.token("ann")
            // The first token is refused (401): the provider is asked once more, with forceRefresh.
            let tokens = Tokens(["not-a-token", good])
            let client = HeraldClient(baseURL: url, tokenProvider: tokens)
            let me = try await client.me()
            #expect(me.id == "ann" && me.role == "customer")
            #expect(tokens.calls.withLock { $0 } == [false, true])

            // The error envelope: the status, the stable code and the field problems.
            await #expect(throws: HeraldClientError.api(status: 404, code: "NOT_FOUND", message: "No such notification.", fields: [], retryAfterSeconds: nil)) {
                try await client.markRead("ntf_nope")
            }
            do {
                _ = try await client.inbox(limit: 500)
                Issue.record("a limit of 500 was accepted")
            } catch let error as HeraldClientError {
                guard case .api(422, "VALIDATION_FAILED", _, let fields, _) = error else { throw error }
                #expect(fields == [.init(field: "limit", message: "must be an integer from 1 to 100")])
            }
            // Nobody listening: a transport error, not a crash or a hang.
            let nowhere = HeraldClient(baseURL: URL(string: "http://127.0.0.1:1")!, tokenProvider: tokens)
            await #expect {
                try await nowhere.me()
            } throws: { error in
                if case .transport = error as? HeraldClientError { return true }
                return false
            }
        }
    }

    @Test func registersTheAPNsTokenOfThisDevice() async throws {
        try await Self.withServer { url, session in
            let client = HeraldClient(baseURL: url, tokenProvider: Tokens([try await session.token("ann")]))
            let token = Data((0..<32).map { UInt8($0 * 7 & 0xFF) })
            let device = try await client.registerAPNs(deviceToken: token, deviceID: "install-1", appVersion: "2.4.0")
            #expect(device.token == token.map { String(format: "%02x", $0) }.joined())
            #expect(device.provider == "apns" && device.platform == "ios" && device.active && device.deviceId == "install-1")
            // Registering again (every launch does) keeps the one device.
            #expect(try await client.registerAPNs(deviceToken: token, deviceID: "install-1").id == device.id)
            let devices = try await session.request(.get, "/api/v1/push/devices", token: try await session.token("ann"))
            #expect(devices.data?["devices"]?.arrayValue?.count == 1)
            #expect(try await client.unregisterDevice(token: device.token).active == false)
        }
    }

    /// What an app's inbox screen does: load, follow the connection, see a notification
    /// arrive (acknowledged, so no push follows), mark it read.
    @Test func theInboxFollowsTheRealtimeConnection() async throws {
        try await Self.withServer { url, session in
            let service = try await session.token("svc", .service)
            let client = HeraldClient(baseURL: url, tokenProvider: Tokens([try await session.token("ann")]))
            let connection = client.realtime()
            let inbox = Inbox(client: client)
            try await inbox.refresh()
            #expect(await inbox.snapshot == InboxSnapshot(notifications: [], unreadCount: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                let states = await connection.states()
                group.addTask { await connection.run() }
                group.addTask { await inbox.follow(connection) }
                for await state in states where state == .connected { break }

                let sent = try await session.request(
                    .post, "/api/v1/notifications", token: service,
                    json: ["user_id": "ann", "type": "driver_assigned", "title": "Alex is on the way", "body": "Silver Camry", "data": ["job_id": "job_42"]])
                #expect(sent.status == 201)
                let id = try #require(sent.data?["results"]?[0]?["notification"]?["id"]?.stringValue)
                let snapshot = try await Self.first(await inbox.snapshots()) { $0.notifications.first?.id == id }
                #expect(snapshot.unreadCount == 1)
                #expect(snapshot.notifications.first?.title == "Alex is on the way" && snapshot.notifications.first?.data?["job_id"] == "job_42")

                // The connection acknowledged it: the socket delivery is done, no push follows.
                try await Self.eventually {
                    let rows = try await session.request(.get, "/api/v1/deliveries?notification_id=\(id)", token: service)
                    return rows.data?["deliveries"]?.arrayValue?.contains { $0["channel"] == "socket" && $0["status"] == "acknowledged" } == true
                }

                try await inbox.markRead(id)
                #expect(await inbox.snapshot.unreadCount == 0)
                #expect(try await client.unreadCount() == 0)
                group.cancelAll()
            }
            #expect(await connection.state == .stopped)
        }
    }

    /// An app that quits and starts again asks for what it missed while it was gone, and
    /// gets it once, in order.
    @Test func aRelaunchedAppCatchesUpFromItsSavedCursor() async throws {
        try await Self.withServer { url, session in
            let service = try await session.token("svc", .service)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("cursors-\(UUID().uuidString).json")
            let tokens = Tokens([try await session.token("ann")])
            @Sendable func publish(_ n: Int) async throws {
                let reply = try await session.request(
                    .post, "/api/v1/realtime/publish", token: service, json: ["room": "user:ann", "event": "news", "payload": ["n": .number(Double(n))]])
                #expect(reply.status == 202)
            }
            @Sendable func news(_ connection: RealtimeConnection, count: Int, publishing: [Int]) async throws -> [Int] {
                try await withThrowingTaskGroup(of: [Int].self) { group in
                    let messages = await connection.messages()
                    let states = await connection.states()
                    group.addTask {
                        var seen: [Int] = []
                        for await message in messages where message.type == "news" {
                            seen.append(Int(message.payload?["n"]?.number ?? -1))
                            if seen.count == count { break }
                        }
                        return seen
                    }
                    group.addTask {
                        await connection.run()
                        return []
                    }
                    for await state in states where state == .connected { break }
                    for n in publishing { try await publish(n) }
                    let seen = try await group.next() ?? []
                    group.cancelAll()
                    return seen
                }
            }
            // First launch: two events live.
            let first = HeraldClient(baseURL: url, tokenProvider: tokens).realtime(cursors: SavedEventCursors(file: file))
            #expect(try await news(first, count: 2, publishing: [1, 2]) == [1, 2])
            // Gone; two more are published meanwhile.
            try await publish(3)
            try await publish(4)
            // Second launch, a new store reading the same file: 3 and 4 are replayed, then 5 live.
            let second = HeraldClient(baseURL: url, tokenProvider: tokens).realtime(cursors: SavedEventCursors(file: file))
            #expect(try await news(second, count: 3, publishing: [5]) == [3, 4, 5])
        }
    }

    /// Drops and refusals: the connection waits (backoff with jitter), asks for a fresh token
    /// after a refused connect, and resubscribes every time it is back.
    @Test func reconnectsWithBackoffAndAFreshTokenAfterARefusal() async throws {
        final class Flaky: RealtimeTransport {
            let attempts = Mutex<[String]>([])
            let sent = Mutex<[String]>([])
            func connect(
                url: URL,
                session: @escaping @Sendable (AsyncThrowingStream<String, any Error>, @escaping @Sendable (String) async throws -> Void) async throws -> Void
            ) async throws {
                let attempt = attempts.withLock { attempts in
                    attempts.append(url.query ?? "")
                    return attempts.count
                }
                struct Refused: Error {}
                if attempt == 1 { throw Refused() }  // the upgrade was refused
                let (inbound, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
                continuation.yield(#"{"type":"connected","user_id":"ann","channels":["user:ann"]}"#)
                // The answer to the catch-up comes before what it sends (the client holds the
                // channel's events until then).
                if attempt == 3 { continuation.yield(#"{"type":"subscribed","status":"subscribed","channel":"trip:tr_1","recovered":true}"#) }
                continuation.yield(#"{"type":"news","event_id":"evt_\#(attempt)","channel":"trip:tr_1","payload":{}}"#)
                if attempt == 2 { continuation.finish() }  // then the server drops it
                try await session(inbound) { text in self.sent.withLock { $0.append(text) } }
            }
        }
        let flaky = Flaky()
        let tokens = Tokens(["t1", "t2"])
        let client = HeraldClient(baseURL: URL(string: "http://127.0.0.1:1")!, tokenProvider: tokens)
        let cursors = SavedEventCursors()
        let connection = RealtimeConnection(client: client, cursors: cursors, backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(5)), using: flaky)
        await connection.subscribe("trip:tr_1")
        let states = await connection.states()
        let runner = Task { await connection.run() }
        let seen = Mutex<[RealtimeState]>([])
        try await Self.within(Patience.limit) {
            var connects = 0
            for await state in states {
                seen.withLock { $0.append(state) }
                if state == .connected { connects += 1 }
                if connects == 2 { break }
            }
        }
        runner.cancel()
        await runner.value
        #expect(flaky.attempts.withLock { $0 } == ["token=t1", "token=t2", "token=t2"])
        #expect(tokens.calls.withLock { $0 } == [false, true, false])  // refreshed after the refusal only
        #expect(seen.withLock { $0 }.filter { if case .waiting = $0 { true } else { false } }.count == 2)
        // Each connection subscribed to the channel, the second from the event the first got.
        let subscribes = flaky.sent.withLock { $0 }.filter { $0.contains("subscribe") }
        #expect(subscribes.count == 2)
        #expect(subscribes[0].contains("trip:tr_1") && !subscribes[0].contains("last_event_id"))
        #expect(subscribes[1].contains(#""last_event_id":"evt_2""#), "\(subscribes)")
        #expect(cursors.lastEventID(channel: "trip:tr_1") == "evt_3")
        #expect(await connection.state == .stopped)
    }

    static func first<T: Sendable>(_ stream: AsyncStream<T>, timeout: Duration = Patience.limit, where predicate: @escaping @Sendable (T) -> Bool) async throws
        -> T
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for await value in stream where predicate(value) { return value }
                return nil
            }
            group.addTask {
                try await CancellableSleep.sleep(for: timeout)
                return nil
            }
            let value = try await group.next() ?? nil
            group.cancelAll()
            return try #require(value, "nothing matched within \(timeout)")
        }
    }

    static func eventually(timeout: Duration = Patience.limit, _ check: @Sendable () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await check() { return }
            try await CancellableSleep.sleep(for: .milliseconds(50))
        }
        Issue.record("not true within \(timeout)")
    }
}
