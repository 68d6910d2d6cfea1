import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import HeraldServer
import HeraldServerTestSupport
import Synchronization
import Testing

/// A Socket.IO client speaking long-polling through the application's routes.
final class PollingClient: Sendable {
    let session: TestSession
    let sid: String
    /// Packets received but not yet looked at.
    private let pending = Mutex<[String]>([])

    init(session: TestSession, sid: String) {
        self.session = session
        self.sid = sid
    }

    static func open(_ session: TestSession) async throws -> PollingClient {
        let reply = try await session.request(.get, "/socket.io/?EIO=4&transport=polling")
        #expect(reply.status == 200)
        let text = reply.text
        #expect(text.hasPrefix("0{"))
        let handshake = try JSONDecoder().decode(JSONValue.self, from: Data(text.dropFirst().utf8))
        return PollingClient(session: session, sid: try #require(handshake["sid"]?.stringValue))
    }

    func post(_ packets: String...) async throws -> Int {
        try await session.request(
            .post, "/socket.io/?EIO=4&transport=polling&sid=\(sid)", headers: [.contentType: "text/plain;charset=UTF-8"],
            rawBody: packets.joined(separator: "\u{1e}")
        ).status
    }

    /// One long-poll: the packets the server had queued.
    func poll() async throws -> (status: Int, packets: [String]) {
        let reply = try await session.request(.get, "/socket.io/?EIO=4&transport=polling&sid=\(sid)")
        return (reply.status, reply.text.split(separator: "\u{1e}").map(String.init))
    }

    /// The next packet with `prefix` (earlier packets are skipped), polling as needed.
    func poll(until prefix: String, attempts: Int = 20) async throws -> String? {
        for _ in 0..<attempts {
            let match: String? = pending.withLock { pending in
                guard let index = pending.firstIndex(where: { $0.hasPrefix(prefix) }) else {
                    pending.removeAll()
                    return nil
                }
                let match = pending[index]
                pending.removeFirst(index + 1)
                return match
            }
            if let match { return match }
            let (status, packets) = try await poll()
            guard status == 200 else { return nil }
            pending.withLock { $0 += packets }
        }
        return nil
    }

    func connect(token: String, extra: String = "") async throws -> JSONValue? {
        _ = try await post(#"40{"token":"\#(token)"\#(extra)}"#)
        guard let reply = try await poll(until: "40") else { return nil }
        return try JSONDecoder().decode(JSONValue.self, from: Data(reply.dropFirst(2).utf8))
    }
}

@Suite struct SocketIOPollingTests {
    @Test func connectsWithATokenAndAnswersWhoami() async throws {
        try await TestServer.run(.sqlite) { session in
            let client = try await PollingClient.open(session)
            let connected = try #require(try await client.connect(token: try await session.token("ann")))
            #expect(connected["sid"]?.stringValue?.isEmpty == false)
            #expect(connected["pid"]?.stringValue?.isEmpty == false)
            #expect(try await client.post("421[\"whoami\"]") == 200)
            let ack = try #require(try await client.poll(until: "431"))
            let body = try JSONDecoder().decode(JSONValue.self, from: Data(ack.dropFirst(3).utf8))
            guard case .array(let items) = body, items.count == 1, case .object(var me)? = items.first,
                case .string(let node)? = me.removeValue(forKey: "node")
            else {
                Issue.record("whoami answered \(body)")
                return
            }
            #expect(node.hasPrefix("node_"))  // the node holding the connection, as /readyz names it
            #expect(JSONValue.object(me) == ["user_id": "ann", "role": "customer", "rooms": ["user:ann"], "recovered": false])
        }
    }

    @Test func theConnectionsGaugeCountsClientsOnly() async throws {
        try await TestServer.run(.sqlite) { session in
            // The trip tracker follows its announcement room from the start: not a connection.
            #expect(try await session.request(.get, "/metrics").text.contains("\nherald_realtime_connections 0\n"))
            let client = try await PollingClient.open(session)
            _ = try #require(try await client.connect(token: try await session.token("ann")))
            #expect(try await session.request(.get, "/metrics").text.contains("\nherald_realtime_connections 1\n"))
        }
    }

    /// A token is checked at connect, and a socket may live for days: once it expires the
    /// socket is told `TOKEN_EXPIRED` and disconnected by the server (the native protocol does
    /// the same), and stops receiving the user's events.
    @Test func aSocketWhoseTokenExpiresIsToldAndDisconnected() async throws {
        let clock = ManualClock()
        // Heartbeats far apart: moving the clock past the token's life must not end the
        // Engine.IO session first.
        try await TestServer.run(.sqlite, clock: clock, configure: { $0.realtime.pingIntervalMs = 600_000 }) { session in
            let client = try await PollingClient.open(session)
            _ = try #require(try await client.connect(token: try await session.token("ann", ttl: 60)))
            let expiry = session.runtime.realtime.socketIO.tokenExpiry
            #expect(expiry.tracked == 1 && session.runtime.realtime.hub.memberCount("user:ann") == 1)
            clock.advance(by: 30)
            #expect(expiry.sweep(now: clock.now().timeIntervalSince1970) == 0)
            clock.advance(by: 31)
            // The service sweeps every second; a long-poll waits for what it sends.
            let told = try #require(try await client.poll(until: "42[\"error\""))
            #expect(told == #"42["error",{"code":"TOKEN_EXPIRED","message":"Your token expired; reconnect with a fresh one."}]"#)
            #expect(try await client.poll(until: "41") == "41")
            #expect(expiry.tracked == 0)
            // Out of the user's room: no more of ann's events reach it.
            #expect(session.runtime.realtime.hub.memberCount("user:ann") == 0)
        }
    }

    @Test func refusesABadTokenWithConnectError() async throws {
        try await TestServer.run(.sqlite) { session in
            let client = try await PollingClient.open(session)
            _ = try await client.post(#"40{"token":"nope"}"#)
            #expect(try await client.poll(until: "44") == #"44{"message":"The token is malformed."}"#)
            let anonymous = try await PollingClient.open(session)
            _ = try await anonymous.post("40")
            #expect(try await anonymous.poll(until: "44") == #"44{"message":"Authentication is required."}"#)
        }
    }

    @Test func publishedEventsArriveWithTheirRecoveryOffset() async throws {
        try await TestServer.run(.sqlite) { session in
            let client = try await PollingClient.open(session)
            _ = try await client.connect(token: try await session.token("ann"))
            let hub = session.runtime.realtime.hub
            try await hub.publish("hello", payload: ["x": 1], to: "user:ann")
            try await hub.publish("typing", payload: ["x": 2], to: "user:ann", persist: false)
            #expect(try await client.poll(until: "42[\"hello\"") == #"42["hello",{"x":1},"1"]"#)
            #expect(try await client.poll(until: "42[\"typing\"") == #"42["typing",{"x":2}]"#)
        }
    }

    @Test func aSlowConsumerIsDroppedWithoutDelayingOthers() async throws {
        try await TestServer.run(.sqlite, configure: { $0.realtime.outboundLimitBytes = 2048 }) { session in
            let slow = try await PollingClient.open(session)
            let fast = try await PollingClient.open(session)
            _ = try await slow.connect(token: try await session.token("slow"))
            _ = try await fast.connect(token: try await session.token("fast"))
            let hub = session.runtime.realtime.hub
            let filler = String(repeating: "x", count: 100)
            var received = 0
            for index in 0..<60 {
                try await hub.publish("tick", payload: ["i": .number(Double(index)), "pad": .string(filler)], to: "user:slow")
                try await hub.publish("tick", payload: ["i": .number(Double(index)), "pad": .string(filler)], to: "user:fast")
                if index % 10 == 9 {
                    // Fan-out is asynchronous: what was published is queued before the poll reads it.
                    await hub.localDeliveriesSettled()
                    received += try await fast.poll().packets.filter { $0.hasPrefix("42[\"tick\"") }.count
                }
            }
            #expect(received == 60)
            // The slow client's queue overflowed: its session is gone.
            let (status, packets) = try await slow.poll()
            #expect(status == 400 || packets == ["1"])
            #expect(try await slow.poll().status == 400)
            #expect(session.runtime.realtime.hub.counters.value(.slowDisconnects) == 1)
            let metrics = try await session.request(.get, "/metrics").text
            #expect(metrics.contains("herald_realtime_slow_disconnects_total 1"))
            await session.runtime.realtime.hub.localDeliveriesSettled()
            #expect(try await session.request(.get, "/metrics").text.contains("\nherald_realtime_fanout_pending 0\n"))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aDroppedSessionRecoversItsRoomsAndMissedEvents(engine: TestEngine) async throws {
        let clock = ManualClock(Date())
        try await TestServer.run(
            engine, clock: clock,
            configure: {
                $0.realtime.pingIntervalMs = 1000
                $0.realtime.pingTimeoutMs = 1000
            }
        ) { session in
            let token = try await session.token("ann", ttl: 86_400)
            let hub = session.runtime.realtime.hub
            let first = try await PollingClient.open(session)
            let connected = try #require(try await first.connect(token: token))
            let pid = try #require(connected["pid"]?.stringValue)
            try await hub.publish("e", payload: 1, to: "user:ann")
            let seen = try #require(try await first.poll(until: #"42["e""#))
            #expect(seen == #"42["e",1,"1"]"#)

            // The transport dies: no pong, the heartbeat gives up.
            clock.advance(by: 5)
            try await waitUntil("the session closed for its missing pong") { try await first.poll().status == 400 }
            for value in 2...4 { try await hub.publish("e", payload: .number(Double(value)), to: "user:ann") }

            let second = try await PollingClient.open(session)
            let resumed = try #require(try await second.connect(token: token, extra: #","pid":"\#(pid)","offset":"1""#))
            #expect(resumed["pid"]?.stringValue == pid)
            #expect(resumed["sid"] == connected["sid"])
            var replayed: [String] = []
            for _ in 0..<3 {
                if let packet = try await second.poll(until: "42[\"e\"") { replayed.append(packet) }
            }
            // Each replayed event carries its own offset (a drop mid-replay resumes from there).
            #expect(replayed == [#"42["e",2,"2"]"#, #"42["e",3,"3"]"#, #"42["e",4,"4"]"#])
            _ = try await second.post("421[\"whoami\"]")
            #expect(try await second.poll(until: "431")?.contains(#""recovered":true"#) == true)

            // A pid can be used once; another user cannot take it over.
            let thief = try await PollingClient.open(session)
            let stolen = try await thief.connect(token: try await session.token("eve"), extra: #","pid":"\#(pid)","offset":"0""#)
            #expect(stolen?["pid"]?.stringValue != pid)
        }
    }
}
