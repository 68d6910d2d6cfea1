import Foundation
import HeraldClient
import HeraldTestSupport
import Synchronization
import Testing

/// The client's catch-up against a scripted server: the order in which a real server may
/// interleave live events and the answer to a catch-up, played back exactly.
@Suite struct RealtimeCatchUpTests {
    /// Plays `script` as the server's messages on the first connection and records what the
    /// client sends; later connections wait until cancelled.
    final class ScriptedTransport: RealtimeTransport {
        let script: [String]
        let sent = Mutex<[String]>([])
        let connections = Mutex(0)
        init(_ script: [String]) { self.script = script }

        func connect(
            url: URL,
            session: @escaping @Sendable (AsyncThrowingStream<String, any Error>, @escaping @Sendable (String) async throws -> Void) async throws -> Void
        ) async throws {
            let first = connections.withLock { count in
                count += 1
                return count == 1
            }
            guard first else {
                try await Task.sleep(for: .seconds(3600))
                return
            }
            let (inbound, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
            for message in script { continuation.yield(message) }
            try await session(inbound) { text in self.sent.withLock { $0.append(text) } }
        }
    }

    struct FixedToken: HeraldTokenProvider {
        func token(forceRefresh: Bool) async throws -> String { "token" }
    }

    static func news(_ seq: Int, live: Bool = false) -> String {
        #"{"type":"news","event_id":"evt_\#(seq)","channel":"user:ann","payload":{"n":\#(seq),"live":\#(live)}}"#
    }

    /// Runs a connection over `script` whose cursor on `user:ann` is `evt_2`; the app's first
    /// `count` news and what the client sent.
    static func run(_ script: [String], count: Int, cursorAfter expected: String? = nil) async throws -> (news: [Int], sent: [String], cursor: String?) {
        let transport = ScriptedTransport(script)
        let cursors = SavedEventCursors()
        cursors.save(eventID: "evt_2", channel: "user:ann")
        let client = HeraldClient(baseURL: URL(string: "http://127.0.0.1:1")!, tokenProvider: FixedToken())
        let connection = RealtimeConnection(client: client, cursors: cursors, using: transport)
        let messages = await connection.messages()
        let running = Task { await connection.run() }
        defer { running.cancel() }
        var seen: [Int] = []
        for await message in messages where message.type == "news" {
            seen.append(Int(message.payload?["n"]?.number ?? -1))
            if seen.count == count { break }
        }
        // The cursor is saved just after the event is handed over. (Not thrown: the caller's
        // expectation names the cursor there was.)
        if let expected {
            try? await waitUntil("the cursor saved", every: .milliseconds(10)) { cursors.lastEventID(channel: "user:ann") == expected }
        }
        return (seen, transport.sent.withLock { $0 }, cursors.lastEventID(channel: "user:ann"))
    }

    @Test func aLiveEventBeforeTheCatchUpAnswerComesAfterTheMissedOnesAndOnce() async throws {
        let connected = #"{"type":"connected","channels":["user:ann"]}"#
        let subscribed = #"{"type":"subscribed","status":"subscribed","channel":"user:ann","replay_from":"evt_3","latest_event_id":"evt_5","recovered":true}"#
        // 5 reaches the socket between connecting and the answer; the replay sends it again.
        let (news, sent, cursor) = try await Self.run(
            [connected, Self.news(5, live: true), subscribed, Self.news(3), Self.news(4), Self.news(5), Self.news(6)], count: 4, cursorAfter: "evt_6")
        #expect(news == [3, 4, 5, 6])
        #expect(cursor == "evt_6")
        #expect(sent.contains { $0.contains(#""last_event_id":"evt_2""#) && $0.contains(#""type":"subscribe""#) })
    }

    @Test func heldEventsFollowAnAnswerThatRecoveredNothing() async throws {
        let connected = #"{"type":"connected","channels":["user:ann"]}"#
        // Too much was missed: the server says so and replays nothing, so what came live is all there is.
        let subscribed = #"{"type":"subscribed","status":"subscribed","channel":"user:ann","replay_from":null,"latest_event_id":"evt_90","recovered":false}"#
        let (news, _, cursor) = try await Self.run(
            [connected, Self.news(89, live: true), subscribed, Self.news(90), Self.news(91)], count: 3, cursorAfter: "evt_91")
        #expect(news == [89, 90, 91])
        #expect(cursor == "evt_91")
    }

    @Test func anEventNotNewerThanTheCursorIsNotHandedOverAgain() async throws {
        // No catch-up in flight (the server's answer came first), and then a repeat of 2 and 3.
        let connected = #"{"type":"connected","channels":["user:ann"]}"#
        let subscribed = #"{"type":"subscribed","status":"subscribed","channel":"user:ann","replay_from":"evt_3","latest_event_id":"evt_3","recovered":true}"#
        let (news, _, _) = try await Self.run([connected, subscribed, Self.news(3), Self.news(2), Self.news(3), Self.news(4)], count: 2)
        #expect(news == [3, 4])
    }
}
