import AsyncHTTPClient
import Foundation
import HeraldPush
import HeraldTestFixtures
import NIOCore
import Testing

@Suite struct MockPushServerTests {
    /// The client speaks HTTP/2 to the mock over TLS with the test certificate, and the
    /// deadline bounds a stalled answer.
    @Test(.timeLimit(.minutes(10)))
    func pushHTTPSpeaksHTTP2OverTLSWithADeadline() async throws {
        try await withTeardown { teardown in
            // `/stall` answers only once the test opens the gate (at teardown): nothing but the
            // client's deadline can end that request.
            let stall = Gate()
            let server = try await MockPushServer.start { request in
                if request.path == "/stall" {
                    await stall.wait()
                    return MockPushServer.Response(status: 200)
                }
                return .json(200, ["protocol": request.protocolName], headers: [("retry-after", "7")])
            }
            teardown.add("mock server") { try await server.stop() }
            teardown.add("stall gate") { stall.open() }  // runs first: the stalled answer ends before the server stops
            // Shut down whatever happens (AHC traps at deinit otherwise).
            let http = try PushHTTP(caFile: server.caFile)
            teardown.add("HTTP client") { try await http.client.shutdown() }
            var request = HTTPClientRequest(url: server.baseURL + "/hello")
            request.method = .POST
            request.body = .bytes(ByteBuffer(string: "{}"))
            // A generous deadline: the whole suite runs in parallel on two cores.
            let response = try await http.execute(request, timeout: Patience.limit)
            #expect(response.status == 200)
            #expect(response.json?["protocol"] == "h2")
            #expect(response.retryAfter(now: Date()) == .seconds(7))
            // The stall lasts until the gate opens, after this: only the deadline can end it.
            await #expect(throws: (any Error).self) {
                _ = try await http.execute(HTTPClientRequest(url: server.baseURL + "/stall"), timeout: .milliseconds(300))
            }
            #expect(!stall.isOpen)
        }
    }
}
