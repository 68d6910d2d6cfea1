import Foundation
import HTTPTypes
import HeraldAuth
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

@testable import HeraldRealtime

/// Backends publishing: one event or a batch over HTTP, and the same over a native
/// WebSocket; members receive what was published, in each room's order; wrong fields, wrong
/// callers and repeated requests are answered as the API conventions say.
@Suite struct RealtimePublishTests {
    static let batch: JSONValue = [
        "events": [
            ["room": "user:ann", "event": "a1", "payload": ["n": 1]],
            ["room": "user:bob", "event": "b1", "payload": "x", "persist": false],
            ["room": "user:ann", "event": "a2", "payload": ["n": 2], "persist": false],
            ["room": "user:ann", "event": "a3"],
        ]
    ]

    @Test(arguments: TestEngine.allCases)
    func aBatchReachesEachRoomInOrderAndIsAnsweredInTheOrderGiven(engine: TestEngine) async throws {
        try await TestServer.run(engine, setup: .live) { session in
            let service = try await session.token("svc", .service)
            try await withNativeClient(session, token: try await session.token("ann")) { ann in
                _ = await ann.next(type: "connected")
                let reply = try await session.request(.post, "/api/v1/realtime/publish/batch", token: service, json: Self.batch)
                #expect(reply.status == 202, "\(reply.text)")
                #expect(
                    reply.data?["events"] == [
                        ["room": "user:ann", "event": "a1", "event_id": "evt_1", "seq": 1],
                        ["room": "user:bob", "event": "b1", "event_id": .null, "seq": .null],
                        ["room": "user:ann", "event": "a2", "event_id": .null, "seq": .null],
                        ["room": "user:ann", "event": "a3", "event_id": "evt_2", "seq": 2],
                    ])
                #expect(await ann.next(type: "a1") == ["type": "a1", "event_id": "evt_1", "channel": "user:ann", "payload": ["n": 1]])
                #expect(await ann.next(type: "a2")?["payload"] == ["n": 2])
                #expect(await ann.next(type: "a3")?["payload"] == .null)
                // One event through the single route: its answer, and the member gets it after the batch's.
                let one = try await session.request(
                    .post, "/api/v1/realtime/publish", token: service, json: ["room": "user:ann", "event": "a4", "payload": ["z": 1, "a": [1.5, true]]])
                #expect(one.status == 202)
                #expect(one.data == ["room": "user:ann", "event": "a4", "event_id": "evt_3", "seq": 3])
                #expect(await ann.next(type: "a4")?["payload"] == ["a": [1.5, true], "z": 1])
                #expect(await ann.next(type: "b1", timeout: .milliseconds(100)) == nil, "user:bob's event is not ann's")
            }
        }
    }

    @Test func wrongCallersAndWrongFieldsAreRefusedAndNothingIsPublished() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            let service = try await session.token("svc", .service)
            let customer = try await session.token("ann")
            for path in ["/api/v1/realtime/publish/batch", "/api/v1/realtime/publish"] {
                #expect(try await session.request(.post, path, json: Self.batch).status == 401)
                #expect(try await session.request(.post, path, token: customer, json: Self.batch).errorCode == "FORBIDDEN")
                let notJSON = try await session.request(.post, path, token: service, rawBody: #"{"events":[}"#)
                #expect(notJSON.status == 400 && notJSON.errorCode == "INVALID_JSON")
            }
            let wrong = try await session.request(
                .post, "/api/v1/realtime/publish/batch", token: service,
                json: ["events": [["room": "user:ann", "event": "ok"], ["room": "$control", "event": "connect"], ["room": "user:ann"]]])
            #expect(wrong.status == 422 && wrong.errorCode == "VALIDATION_FAILED")
            let fields = wrong.json?["error"]?["details"]?["fields"]?.arrayValue?.compactMap { $0["field"]?.stringValue }
            #expect(fields == ["events[1].room", "events[1].event", "events[2].event"])
            #expect(try await hub.lastSeq(room: "user:ann") == 0, "a batch with a wrong event publishes none of it")
            let empty = try await session.request(.post, "/api/v1/realtime/publish/batch", token: service, json: ["events": []])
            #expect(empty.status == 422)
        }
    }

    @Test func aRepeatedBatchWithTheSameKeyIsPublishedOnce() async throws {
        try await TestServer.run(.sqlite, setup: .live) { session in
            let hub = session.runtime.realtime.hub
            let service = try await session.token("svc", .service)
            let headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "batch-1"]
            let first = try await session.request(.post, "/api/v1/realtime/publish/batch", token: service, headers: headers, json: Self.batch)
            let again = try await session.request(.post, "/api/v1/realtime/publish/batch", token: service, headers: headers, json: Self.batch)
            #expect(first.status == 202 && again.status == 202)
            #expect(again.data == first.data)
            #expect(try await hub.lastSeq(room: "user:ann") == 2)
        }
    }

    /// A publisher's WebSocket: one event or a batch per message, answered with the caller's
    /// `ref`; services are not held to the clients' message rate; others may not publish.
    @Test func servicesPublishOverTheNativeWebSocket() async throws {
        // A frozen clock and a budget of 2 messages a second: a client would be limited.
        let clock = ManualClock(Date())
        try await TestServer.run(.sqlite, setup: .live, clock: clock, configure: { $0.realtime.clientMessagesPerSecond = 2 }) { session in
            try await withNativeClient(session, token: try await session.token("ann", ttl: 86_400)) { ann in
                _ = await ann.next(type: "connected")
                try await withNativeClient(session, token: try await session.token("svc", .service, ttl: 86_400)) { publisher in
                    _ = await publisher.next(type: "connected")
                    for index in 1...5 {
                        publisher.send([
                            "type": "publish", "ref": .number(Double(index)), "room": "user:ann", "event": "tick", "payload": ["i": .number(Double(index))],
                        ])
                    }
                    for index in 1...5 {
                        let answer = await publisher.next(type: "published")
                        #expect(
                            answer == [
                                "type": "published", "ref": .number(Double(index)), "room": "user:ann", "event": "tick", "event_id": .string("evt_\(index)"),
                                "seq": .number(Double(index)),
                            ])
                    }
                    for index in 1...5 {
                        #expect(await ann.next(type: "tick")?["payload"] == ["i": .number(Double(index))])
                    }
                    publisher.send(["type": "publish", "ref": "b", "events": Self.batch["events"] ?? .null])
                    let answer = await publisher.next(type: "published")
                    #expect(answer?["type"] == "published" && answer?["ref"] == "b")
                    #expect(answer?["events"]?.arrayValue?.map { $0["seq"] ?? "absent" } == [6, .null, .null, 7])
                    #expect(await ann.next(type: "a1")?["event_id"] == "evt_6")
                    #expect(await ann.next(type: "a2")?["event_id"] == .null)
                    #expect(await ann.next(type: "a3")?["event_id"] == "evt_7")

                    publisher.send(["type": "publish", "ref": "w", "events": [["room": "user:ann", "event": "disconnect"]]])
                    let wrong = await publisher.next(type: "error")
                    #expect(wrong?["type"] == "error" && wrong?["code"] == "VALIDATION_FAILED" && wrong?["ref"] == "w")
                    #expect(wrong?["fields"]?.arrayValue?.compactMap { $0["field"]?.stringValue } == ["events[0].event"])
                    publisher.send(["type": "publish", "ref": ["not": "a ref"], "room": "user:ann", "event": "e"])
                    #expect(await publisher.next(type: "error")?["fields"]?.arrayValue?.first?["field"] == "ref")
                }
                // A client may not publish, even to its own room.
                ann.send(["type": "publish", "ref": "mine", "room": "user:ann", "event": "forged"])
                let refused = await ann.next(type: "error")
                #expect(refused?["code"] == "FORBIDDEN" && refused?["ref"] == "mine")
                #expect(try await session.runtime.realtime.hub.lastSeq(room: "user:ann") == 7)
            }
        }
    }
}
