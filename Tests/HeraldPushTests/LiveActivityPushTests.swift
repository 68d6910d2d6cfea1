import Foundation
import HeraldCore
import HeraldPush
import HeraldTestFixtures
import Testing

/// ActivityKit pushes: Apple's payload and headers, sent over the real APNs client.
@Suite struct LiveActivityPushTests {
    static func message(_ event: LiveActivityEvent, important: Bool = false, alert: LiveActivityAlert? = nil) -> LiveActivityMessage {
        LiveActivityMessage(
            pushID: "la_1:3", activityID: "la_1", token: APNsFixture.token, event: event, timestamp: 1_800_000_100,
            contentState: ["state": "ACCEPTED", "eta_minutes": 4], staleDate: 1_800_001_000, dismissalDate: 1_800_000_900, alert: alert,
            attributesType: "TripActivityAttributes", attributes: ["trip_id": "tr_1"], important: important)
    }

    static func aps(_ message: LiveActivityMessage) throws -> JSONValue {
        let object = try JSONDecoder().decode(JSONValue.self, from: LiveActivityPayload.encode(message))
        #expect(object.objectValue?.keys.sorted() == ["aps"])
        return try #require(object["aps"])
    }

    @Test func anUpdateCarriesTheContentStateTimestampAndStaleDate() throws {
        let aps = try Self.aps(Self.message(.update))
        #expect(aps.objectValue?.keys.sorted() == ["content-state", "event", "stale-date", "timestamp"])
        #expect(aps["event"] == "update" && aps["timestamp"] == 1_800_000_100 && aps["stale-date"] == 1_800_001_000)
        #expect(aps["content-state"] == ["state": "ACCEPTED", "eta_minutes": 4])
        // Keys in sorted order, as the rest of Herald's payloads.
        let text = String(decoding: try LiveActivityPayload.encode(Self.message(.update)), as: UTF8.self)
        #expect(text.hasPrefix("{\"aps\":{\"content-state\":"))
    }

    @Test func aStartCarriesTheAttributesAndItsAlert() throws {
        let aps = try Self.aps(Self.message(.start, important: true, alert: LiveActivityAlert(title: "Driver on the way", body: "Alex, silver Camry")))
        #expect(aps["event"] == "start" && aps["attributes-type"] == "TripActivityAttributes" && aps["attributes"] == ["trip_id": "tr_1"])
        #expect(aps["alert"] == ["title": "Driver on the way", "body": "Alex, silver Camry", "sound": "default"])
        #expect(aps["input-push-token"] == 1 && aps["dismissal-date"] == nil)
    }

    @Test func anEndCarriesItsDismissalDateAndNoStaleDate() throws {
        let aps = try Self.aps(Self.message(.end, important: true))
        #expect(aps["event"] == "end" && aps["dismissal-date"] == 1_800_000_900 && aps["stale-date"] == nil)
        #expect(aps["attributes"] == nil && aps["attributes-type"] == nil && aps["alert"] == nil)
    }

    @Test func aPayloadOverTheLimitIsRefusedNotCut() {
        var message = Self.message(.update)
        message.contentState = ["text": .string(String(repeating: "x", count: 5000))]
        #expect(throws: APNsPayload.TooLarge.self) { try LiveActivityPayload.encode(message) }
    }

    @Test func theHeadersNameTheLiveActivityTopicAndPriority() {
        let routine = Dictionary(uniqueKeysWithValues: LiveActivityPayload.headers(for: Self.message(.update), topic: "com.example.rider"))
        #expect(routine["apns-topic"] == "com.example.rider.push-type.liveactivity" && routine["apns-push-type"] == "liveactivity")
        #expect(routine["apns-priority"] == "5" && routine["apns-id"] == APNsSender.apnsID(forDelivery: "la_1:3"))
        let important = Dictionary(uniqueKeysWithValues: LiveActivityPayload.headers(for: Self.message(.update, important: true), topic: "t"))
        #expect(important["apns-priority"] == "10")
    }

    @Test func theSenderPostsItOverHTTP2AndClassifiesTheAnswer() async throws {
        let script = Script([APNsFixture.reply(200), APNsFixture.reply(410, "Unregistered", extra: ["timestamp": 1_700_000_000_000])])
        try await APNsFixture.with({ _ in script.next() }) { f in
            #expect(try await f.sender.sendLiveActivity(Self.message(.update)) == .accepted(providerMessageID: "X"))
            let request = try #require(f.server.requests.first)
            #expect(request.protocolName == "h2" && request.path == "/3/device/\(APNsFixture.token)")
            #expect(request.header("apns-topic") == "com.example.rider.push-type.liveactivity" && request.header("apns-push-type") == "liveactivity")
            #expect(request.header("authorization")?.hasPrefix("bearer ") == true)
            #expect((request.json?["aps"] as? [String: Any])?["event"] as? String == "update")
            // The activity was dismissed: its token is gone.
            #expect(try await f.sender.sendLiveActivity(Self.message(.update)) == .tokenGone(.apns(.unregistered)))
        }
    }
}
