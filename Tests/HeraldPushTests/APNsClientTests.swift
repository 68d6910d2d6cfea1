import Foundation
import HeraldCore
import HeraldMockProviders
import HeraldTestFixtures
import NIOCore
import Testing

@testable import HeraldPush

/// The APNs HTTP/2 client under load and failure, against the TLS + HTTP/2 mock.
@Suite struct APNsClientTests {
    static func message(_ index: Int) -> PushMessage {
        var message = APNsFixture.message()
        message.deliveryID = "dlv_\(index)"
        return message
    }

    /// Sends `count` messages with at most `concurrency` in flight; returns the results.
    static func sendAll(_ sender: APNsSender, count: Int, concurrency: Int) async -> [PushResult] {
        await withTaskGroup(of: PushResult.self) { group in
            var results: [PushResult] = []
            for index in 0..<count {
                if index >= concurrency, let result = await group.next() { results.append(result) }
                group.addTask { (try? await sender.send(message(index))) ?? .retryLater(.transport(.sendError), after: nil) }
            }
            for await result in group { results.append(result) }
            return results
        }
    }

    @Test func requestsSpreadOverTheConfiguredConnectionsBeyondTheStreamLimit() async throws {
        // 400 in flight over 2 connections: twice the mock's 100 concurrent streams on each.
        try await APNsFixture.with(
            { request in
                MockPushServer.Response(status: 200, headers: [("apns-id", request.header("apns-id") ?? "")], delay: .milliseconds(20))
            }, connections: 2
        ) { f in
            let results = await Self.sendAll(f.sender, count: 1200, concurrency: 400)
            #expect(results.count == 1200)
            #expect(results.allSatisfy { if case .accepted = $0 { true } else { false } })
            #expect(f.server.connectionCount == 2)
            // Each answer is matched to its own request: the apns-id echoed is the one sent.
            let sentIDs = Set((0..<1200).map { APNsSender.apnsID(forDelivery: "dlv_\($0)") })
            let answered = Set(results.compactMap { if case .accepted(let id) = $0 { id } else { nil } })
            #expect(answered == sentIDs)
        }
    }

    @Test func errorBodiesBeyondTheFlowControlWindowKeepFlowing() async throws {
        // 2,000 error answers of ~100 bytes: ~200 KB, three times HTTP/2's initial 64 KB
        // window. Without WINDOW_UPDATEs from the client the server would stall after ~650.
        let padding = String(repeating: "x", count: 60)
        try await APNsFixture.with({ _ in .json(400, ["reason": "BadCollapseId", "pad": padding]) }) { f in
            let results = await Self.sendAll(f.sender, count: 2000, concurrency: 50)
            #expect(results.count == 2000)
            #expect(results.allSatisfy { $0 == .refused(.apns(.badCollapseID)) })
        }
    }

    @Test func anUnreachableAPNsIsARetryNotAHang() async throws {
        // A port nobody listens on: the connection is refused at once.
        let server = try await MockPushServer.start { _ in .init(status: 200) }
        let port = server.port
        try await server.stop()
        try await withTeardown { teardown in
            let client = try APNsClient(baseURL: "https://localhost:\(port)", caFile: server.caFile, connections: 1)
            teardown.add("APNs client") { await client.shutdown() }
            let config = try APNsFixture.config(baseURL: "https://localhost:\(port)", caFile: server.caFile)
            // A long deadline: the refused connection must end the send, not the timer.
            let sender = try await APNsSender(config: config, client: client, clock: ManualClock(Date()), requestTimeout: Patience.limit)
            let result = try await sender.send(APNsFixture.message())
            #expect(result == .retryLater(.transport(.connectionError), after: nil))
        }
    }

    /// TCP_NODELAY belongs to the TCP level: at the socket level its number (1) is SO_DEBUG,
    /// which only a process with CAP_NET_ADMIN may set. Asked there, it made every connection
    /// to APNs fail for a node running as an unprivileged user, as the container image does.
    @Test func connectionsSetNoDelayAtTheTCPLevelAndNothingAtTheSocketLevel() async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(200) }) { f in
            let connection = try await f.client.connection()
            let socketDebug = ChannelOptions.Types.SocketOption(level: .socket, name: NIOBSDSocket.Option(rawValue: Int32(SO_DEBUG)))
            #expect(try await connection.channel.getOption(socketDebug).get() == 0)
            #expect(try await connection.channel.getOption(.tcpOption(.tcp_nodelay)).get() != 0)
        }
    }

    @Test func afterShutdownSendsFailFastAndNothingIsLeftOpen() async throws {
        try await APNsFixture.with({ _ in APNsFixture.reply(200) }) { f in
            let before = try await f.sender.send(APNsFixture.message())
            #expect(before == .accepted(providerMessageID: "X"))
            await f.client.shutdown()
            let after = try await f.sender.send(APNsFixture.message())
            #expect(after == .retryLater(.transport(.connectionError), after: nil))
        }
    }

    /// A development build's token works only against the sandbox host and
    /// an App Store build's only against production, so `environment` must pick the host.
    @Test func theEnvironmentPicksApplesHost() async throws {
        var config = APNsConfig(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: "", topic: "com.example.app")
        let production = try APNsSender.makeClient(config)
        #expect(production.authority == "api.push.apple.com" && production.port == 443)
        config.environment = .sandbox
        let sandbox = try APNsSender.makeClient(config)
        #expect(sandbox.authority == "api.sandbox.push.apple.com" && sandbox.port == 443)
        config.baseURL = "https://127.0.0.1:8443"
        let mock = try APNsSender.makeClient(config)
        #expect(mock.authority == "127.0.0.1:8443" && mock.host == "127.0.0.1" && mock.port == 8443)
        for client in [production, sandbox, mock] { await client.shutdown() }
    }

    @Test func anInvalidBaseURLIsAConfigurationError() {
        #expect(throws: APNsTransportError.self) { try APNsClient(baseURL: "http://api.push.apple.com") }
        #expect(throws: APNsTransportError.self) { try APNsClient(baseURL: "not a url") }
    }
}
