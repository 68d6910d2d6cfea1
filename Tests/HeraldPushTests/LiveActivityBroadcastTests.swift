import Crypto
import Foundation
import HeraldCore
import HeraldMockProviders
import HeraldPush
import HeraldTestFixtures
import Testing

/// Broadcast channels over the real APNs client: the channel management requests and the
/// broadcast as Apple documents them, and how each answer is read.
@Suite struct LiveActivityBroadcastTests {
    static let channel = "dGVzdC1jaGFubmVsLWlkLTE="

    static func message(_ event: LiveActivityEvent = .update, important: Bool = false) -> LiveActivityMessage {
        LiveActivityMessage(
            pushID: "lac_1:2", activityID: "lac_1", token: channel, event: event, timestamp: 1_800_000_100,
            contentState: ["stop_id": "S1", "departures": []], staleDate: event == .end ? nil : 1_800_001_000,
            dismissalDate: event == .end ? 1_800_000_900 : nil, important: important)
    }

    static func failure(_ result: Result<Void, LiveActivityChannelFailure>) -> LiveActivityChannelFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }

    /// A sender with both clients pointed at one mock answering from `script`.
    static func with(_ script: Script, _ body: (MockPushServer, APNsSender) async throws -> Void) async throws {
        try await withTeardown { teardown in
            let server = try await MockPushServer.start { _ in script.next() }
            teardown.add("mock APNs") { try await server.stop() }
            let config = try APNsFixture.config(baseURL: server.baseURL, caFile: server.caFile)
            let client = try APNsSender.makeClient(config)
            teardown.add("APNs client") { await client.shutdown() }
            let channels = try APNsSender.makeChannelClient(config)
            teardown.add("channel client") { await channels.shutdown() }
            let sender = try await APNsSender(config: config, client: client, channelClient: channels, clock: ManualClock(Date()))
            try await body(server, sender)
        }
    }

    @Test func theManagementHostIsApplesUnlessABaseURLIsSet() throws {
        var config = try APNsFixture.config(baseURL: "https://apns.example:8443", caFile: "/dev/null")
        #expect(APNsSender.channelBaseURL(config, environment: .production) == "https://apns.example:8443")
        config.baseURL = nil
        #expect(APNsSender.channelBaseURL(config, environment: .production) == "https://api-manage-broadcast.push.apple.com:2196")
        #expect(APNsSender.channelBaseURL(config, environment: .sandbox) == "https://api-manage-broadcast.sandbox.push.apple.com:2195")
    }

    @Test func aChannelIsCreatedAndDeletedAsAppleDocuments() async throws {
        let script = Script([
            MockPushServer.Response(status: 201, headers: [("apns-channel-id", Self.channel), ("apns-request-id", "r1")]),
            MockPushServer.Response(status: 204), .json(404, ["reason": "BadPath"]), .json(500, ["reason": "InternalServerError"]),
            .json(400, ["reason": "BroadcastFeatureNotEnabled"]),
        ])
        try await Self.with(script) { server, sender in
            #expect(await sender.createChannel(storage: .mostRecent) == .success(Self.channel))
            let create = try #require(server.requests.first)
            #expect(create.method == "POST" && create.path == "/1/apps/com.example.rider/channels" && create.protocolName == "h2")
            #expect(create.json?["message-storage-policy"] as? Int == 1 && create.json?["push-type"] as? String == "LiveActivity")
            #expect(create.header("authorization")?.hasPrefix("bearer ") == true && create.header("apns-channel-id") == nil)
            // Deleted (204), and one APNs no longer has (404 BadPath) counts as deleted too.
            #expect(Self.failure(await sender.deleteChannel(Self.channel)) == nil)
            #expect(Self.failure(await sender.deleteChannel(Self.channel)) == nil)
            let delete = try #require(server.requests.dropFirst().first)
            #expect(delete.method == "DELETE" && delete.path == "/1/apps/com.example.rider/channels" && delete.body.isEmpty)
            #expect(delete.header("apns-channel-id") == Self.channel)
            // A 5xx is worth another try; a refusal is not.
            #expect(Self.failure(await sender.deleteChannel(Self.channel)) == LiveActivityChannelFailure(reason: "InternalServerError", retryable: true))
            #expect(
                await sender.createChannel(storage: .none) == .failure(LiveActivityChannelFailure(reason: "BroadcastFeatureNotEnabled", retryable: false)))
            #expect(server.requests.last?.json?["message-storage-policy"] as? Int == 0)
        }
    }

    @Test func aBroadcastNamesTheChannelAndAnExpiration() async throws {
        let script = Script([
            MockPushServer.Response(status: 200, headers: [("apns-request-id", "r2")]), MockPushServer.Response(status: 200),
            .json(400, ["reason": "ChannelNotRegistered"]), .json(400, ["reason": "BadChannelId"]), .json(429, ["reason": "TooManyRequests"]),
        ])
        try await Self.with(script) { server, sender in
            #expect(try await sender.broadcast(Self.message(), storage: .mostRecent) == .accepted(providerMessageID: "r2"))
            let request = try #require(server.requests.first)
            #expect(request.method == "POST" && request.path == "/4/broadcasts/apps/com.example.rider")
            #expect(request.header("apns-channel-id") == Self.channel && request.header("apns-push-type") == "liveactivity")
            #expect(request.header("apns-priority") == "5" && request.header("apns-topic") == nil)
            // Kept for an offline device until the content goes stale.
            #expect(request.header("apns-expiration") == "1800001000")
            #expect(request.header("apns-request-id")?.count == 36)
            #expect((request.json?["aps"] as? [String: Any])?["event"] as? String == "update")
            // A channel that stores nothing takes expiration 0; an end at priority 10.
            _ = try await sender.broadcast(Self.message(.end, important: true), storage: .none)
            #expect(server.requests.last?.header("apns-expiration") == "0" && server.requests.last?.header("apns-priority") == "10")
            // A deleted or unknown channel is gone; throttling is retried.
            #expect(
                try await sender.broadcast(Self.message(), storage: .mostRecent) == .tokenGone(.apns(.unlisted(status: 400, reason: "ChannelNotRegistered"))))
            #expect(try await sender.broadcast(Self.message(), storage: .mostRecent) == .tokenGone(.apns(.unlisted(status: 400, reason: "BadChannelId"))))
            #expect(try await sender.broadcast(Self.message(), storage: .mostRecent) == .retryLater(.apns(.tooManyRequests), after: nil))
        }
    }
}
