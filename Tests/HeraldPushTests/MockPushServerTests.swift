import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldTestSupport
import NIOCore
import Testing

@Suite struct MockPushServerTests {
    /// The client speaks HTTP/2 to the mock over TLS with the test certificate, and the
    /// deadline bounds a stalled answer.
    @Test func pushHTTPSpeaksHTTP2OverTLSWithADeadline() async throws {
        try await withTeardown { teardown in
            let server = try await MockPushServer.start { request in
                if request.path == "/stall" { return MockPushServer.Response(status: 200, delay: .seconds(30)) }
                return .json(200, ["protocol": request.protocolName], headers: [("retry-after", "7")])
            }
            teardown.add("mock server") { try await server.stop() }
            // Shut down whatever happens (AHC traps at deinit otherwise).
            let http = try PushHTTP(caFile: server.caFile)
            teardown.add("HTTP client") { try await http.client.shutdown() }
            var request = HTTPClientRequest(url: server.baseURL + "/hello")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: "{}"))
            // A generous deadline: the whole suite runs in parallel on two cores.
            let response = try await http.execute(request, timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(response.json?["protocol"] == "h2")
            #expect(response.retryAfter(now: Date()) == .seconds(7))
            let started = ContinuousClock.now
            await #expect(throws: (any Error).self) {
                _ = try await http.execute(HTTPClientRequest(url: server.baseURL + "/stall"), timeout: .milliseconds(300))
            }
            // The stall is 30 s: well under that proves the deadline cut it (loose, for a busy suite).
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }
}
